"""The device client: randomize one user's answer by a campaign spec, with the OS's CSPRNG.

:class:`Client` runs a spec's sampler (``docs/wire-format.md`` §2) exactly: every decision is an
integer comparison of a uniform 32-bit word with a threshold of the spec. The words come from the
operating system's CSPRNG (``os.urandom``) by default, never from a seeded or fast generator
(google/rappor warns that its fast generator must never run in production); tests inject a word
source. A client checks the spec's id, structure and every privacy claim before it reports
anything (:func:`pldp.deploy.verify`), and never logs an answer.

A memoized spec (``pldp.LGRR``, ``pldp.LOUE``, ...: ``docs/wire-format.md`` §2, the memo node)
needs the device to keep one permanent randomized response per (memo key, value): the client
keeps it in a memo store (:mod:`pldp.deploy.memostore`; by default a file in the user's data
directory, mode ``0600``, replaced atomically), draws it from the CSPRNG the first time a value is
reported and stores it before the report is returned; every report draws a fresh instantaneous
response. The memo is never sent or logged; a store that cannot be read or trusted makes the
client refuse to report, saying why.

Examples
--------
>>> import pldp
>>> from pldp.deploy import Spec
>>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=["linux", "mac", "windows"])
>>> report = Client(spec).report("mac")
>>> sorted(report), report["spec"] == spec.id, report["payload"] in (0, 1, 2)
(['format', 'id', 'payload', 'spec'], True, True)
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Mapping, Sequence
from typing import Any, cast

import numpy as np

from pldp.channel import (
    AttributesNode,
    DirectNode,
    HeavyNode,
    LeveledNode,
    MemoInput,
    MemoNode,
    Node,
    NodeVisitor,
    PaddingNode,
    UnaryNode,
)
from pldp.channel.heavy import answer_rows
from pldp.channel.sampling import os_words
from pldp.channel.words import Cursor, RejectedError, WordSource, WordStream
from pldp.deploy.labels import label_index
from pldp.deploy.memostore import DeviceMemo, MemoFile, MemoStore, permanent_fingerprint
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ParameterError
from pldp.ledger import Caps, Ledger, LedgerView, default_ledger_path, new_values

__all__ = ["Client", "WordSource"]

#: Words of the report id.
ID_WORDS = 4


class _Inputs(NodeVisitor[Any]):
    """A node's program inputs from a batch of answers.

    ``node.accept(_Inputs(client), answers, level, levels, part)``.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    def direct(self, node: DirectNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        return self.client._items(answers, part, node.d)

    def unary(self, node: UnaryNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        return self.client._items(answers, part, node.d)

    def leaf(self, node: Any, answers: Any, level: Any, levels: Any, part: int) -> Any:
        """One item per report, of the leaf's ``d`` items (a leaf that takes anything else has no rule)."""
        if not node.takes_one_item:
            raise TypeError(
                f"{type(self).__name__} has no rule for a {node.kind} node: its input is not one item per report"
            )
        return self.client._items(answers, part, node.d)

    def heavy(self, node: HeavyNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        """Free text: each answer (a string) as its row of ``max_bytes`` bytes (``answer_rows``)."""
        if level is not None or levels is not None:
            raise ParameterError("this spec has no level choice: a free-text campaign runs one level")
        return answer_rows(list(answers), node.max_bytes, text_only=True)  # as the JS client: no bytes

    def padding(self, node: PaddingNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        rows = [list(s) for s in answers]
        fast = _item_sets(rows, self.client._index[part], node.d)
        if fast is not None:
            return fast
        sets = [sorted(set(self.client._items(r, part, node.d).tolist())) for r in rows]
        for s, raw in zip(sets, rows, strict=True):
            if len(s) != len(raw):
                raise ParameterError(f"an item-set repeats an item: {raw!r}")
        sizes = np.array([len(s) for s in sets], dtype=np.int64)
        offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        flat = np.array([v for s in sets for v in s], dtype=np.int64)
        return flat, offsets, sizes

    def leveled(self, node: LeveledNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        x = self.client._items(answers, part, node.d)
        return x, self.client._levels(level, x.size, node.t, "level")

    def memo(self, node: MemoNode, answers: Any, level: Any, levels: Any, part: int) -> MemoInput:
        return self.client._memo_input(self.client._items(answers, part, node.d))

    def attributes(self, node: AttributesNode, answers: Any, level: Any, levels: Any, part: int) -> Any:
        rows = [list(r) for r in answers]
        if any(len(r) != len(node.parts) for r in rows):
            raise ParameterError(f"each answer needs one value per attribute ({len(node.parts)})")
        lv = None if levels is None else np.asarray(levels).reshape(len(rows), len(node.parts))
        out = []
        for i, p in enumerate(node.parts):
            col = [r[i] for r in rows]
            out.append(p.accept(self, col, None if lv is None else lv[:, i], None, i))
        return out


def _item_sets(rows: list[list[Any]], index: Mapping[Any, int], d: int) -> tuple[np.ndarray, ...] | None:
    """Item-sets as ``(flat, offsets, sizes)``, each set's items ascending, read with whole-batch
    operations when every element is a Python int (an index) or every one a label, each in range
    and no set repeating an item; None otherwise, and the per-set reader of :class:`_Inputs` then
    reads the batch or refuses it with the first bad set named (so both accept the same batches)."""
    flat = list(itertools.chain.from_iterable(rows))
    kinds = set(map(type, flat))
    if getattr(index, "takes_text", False) and kinds != {str}:
        return None  # hashed answers are text only: the per-set reader names what else was given
    try:
        if kinds <= {int}:
            x = np.array(flat, dtype=np.int64).reshape(len(flat))
        elif kinds == {str}:
            x = np.fromiter(map(index.__getitem__, flat), dtype=np.int64, count=len(flat))
        else:
            return None
    except (KeyError, OverflowError):
        return None
    if x.size and (x.min() < 0 or x.max() >= d):
        return None
    sizes = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    keys = np.sort(np.repeat(np.arange(len(rows), dtype=np.int64), sizes) * d + x)  # row-major, items ascending
    if np.any(np.diff(keys) == 0):
        return None
    offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
    return keys % d, offsets, sizes


class Client:
    """Randomize answers by a campaign spec on the user's device.

    Parameters
    ----------
    spec : Spec, dict or str
        The campaign spec (its JSON is read with :meth:`Spec.from_json`: a malformed or altered
        spec, or one whose privacy claim fails, raises :class:`~pldp.errors.SpecError`). The
        spec's oracle, the collector's estimator, is not rebuilt (``check_oracle=False``): the
        client runs only the sampler, so it loads no mechanism, estimator or scipy.
    random : callable, optional
        ``random(n)`` returns ``n`` uniform ``uint32`` words. Default: the OS CSPRNG
        (:func:`pldp.channel.sampling.os_words`). Inject a source only for tests.
    store : path or MemoStore, optional
        Where a memoized spec's permanent responses are kept: a file path (:class:`MemoFile`), or a
        :class:`~pldp.deploy.memostore.MemoStore` (:class:`~pldp.deploy.memostore.MemoryStore` keeps
        them in memory, for tests and simulations only: a later process would redraw them and void
        the eps_perm claim). Default: :func:`~pldp.deploy.memostore.default_store_path`, a file in
        the user's data directory. Not opened for a spec that is not memoized.
    ledger : path or Ledger, optional
        The device's privacy ledger (:mod:`pldp.ledger`): every batch is charged to it, and refused
        (:class:`~pldp.ledger.LedgerCapError`) before anything is drawn if it would go over a cap
        (the owner's, or the spec's own: :attr:`pldp.deploy.Spec.caps`). Default none, except for a
        spec that sets caps: then :func:`~pldp.ledger.default_ledger_path`, a file in the user's
        data directory (a ledger in memory would forget the spend across runs and void the caps).
    caps : Caps, optional
        The device owner's caps, for a ``ledger`` given as a path.

    Attributes
    ----------
    last_new_values : int
        How many distinct values of the last :meth:`report` / :meth:`reports` call were new to the
        memo (each drew its permanent response, so spent its eps_perm once); 0 for a spec that is
        not memoized. What a privacy ledger records as the per-value spend, for display only: its
        caps are checked against a charge that does not depend on the answers (:mod:`pldp.ledger`).
    last_new_items : ndarray of int64
        Those values (item indices, sorted): on the device only, like the memo itself.

    Notes
    -----
    Answers are item labels or indices (for a spec of free-text answers, the hashed form of
    :mod:`pldp.deploy.labels`, text only); for padding-and-sampling a set of them; for MPLDP one per
    attribute. ``level`` (PLDP-FEBSF and the other leveled protocols: the user's budget level, an
    index) and ``levels`` (MPLDP: one level index per attribute) are her choices.
    """

    def __init__(
        self,
        spec: Spec | dict[str, Any] | str,
        random: WordSource | None = None,
        *,
        store: MemoStore | str | os.PathLike[str] | None = None,
        ledger: Ledger | str | os.PathLike[str] | None = None,
        caps: Caps | None = None,
    ) -> None:
        self.spec = spec if isinstance(spec, Spec) else Spec.from_json(spec, check_oracle=False)
        if ledger is None and self.spec.caps is not None:  # the spec's caps must outlive this process
            ledger = default_ledger_path()
        if caps is not None and not (ledger is not None and not isinstance(ledger, Ledger)):
            raise ParameterError("caps go with a ledger path (a Ledger object has its own caps)")
        self._ledger = ledger if isinstance(ledger, Ledger) or ledger is None else Ledger(ledger, caps=caps)
        self._stream = WordStream(random if random is not None else os_words)
        root = self.spec.root
        self._memo: DeviceMemo | None = None
        self._memos: dict[str, Any] | None = None  # the store's memos during a batch
        self.last_new_values = 0
        self.last_new_items = np.empty(0, dtype=np.int64)
        if root.memoized:
            where = store if isinstance(store, MemoStore) else MemoFile(store)
            key = self.spec.memo_key
            assert key is not None  # a memoized spec states its key (read_spec)
            node = cast(MemoNode, root)
            self._memo = DeviceMemo(where, key, permanent_fingerprint(self.spec.labels, node), node)
        labels = self.spec.labels
        lists = root.label_lists(labels)
        self._index = [label_index(lab_list) for lab_list in lists]  # a range form's parses, making no d strings

    # ------------------------------------------------------------------ inputs
    def _items(self, answers: Any, part: int, n_items: int) -> np.ndarray:
        """Answers (indices or labels; for a hashed form, text only) as item indices."""
        index = self._index[part]
        if getattr(index, "takes_text", False):  # each answer's text hashed to its bucket, never an index
            texts = np.asarray(answers, dtype=object).reshape(-1).tolist()  # as given: no int made a string
            return np.fromiter(map(index.__getitem__, texts), dtype=np.int64, count=len(texts))
        arr = np.asarray(answers).reshape(-1)
        if arr.dtype.kind in "iu":
            x = arr.astype(np.int64)
        else:
            values = arr.tolist()
            try:  # labels: one dict lookup each, at C speed
                x = np.fromiter(map(self._index[part].__getitem__, values), dtype=np.int64, count=len(values))
            except (KeyError, TypeError):  # indices among the labels, or an unknown answer (named)
                x = np.array([self._index_of(v, part) for v in values], dtype=np.int64)
        if x.size and (x.min() < 0 or x.max() >= n_items):
            raise ParameterError(f"answer indices must lie in [0, {n_items}), got {int(x.min())}..{int(x.max())}")
        return x

    def _index_of(self, value: Any, part: int) -> int:
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            return int(value)
        try:
            return self._index[part][value]
        except (KeyError, TypeError):
            raise ParameterError(f"{value!r} is not one of the spec's answers") from None

    def _levels(self, level: Any, n: int, t: int, name: str) -> np.ndarray:
        if level is None:
            raise ParameterError(f"this spec needs each user's chosen {name} (an index in [0, {t}))")
        lv = np.broadcast_to(np.asarray(level), (n,)) if np.ndim(level) == 0 else np.asarray(level).reshape(-1)
        if lv.shape != (n,) or (lv.size and lv.dtype.kind not in "iu"):
            raise ParameterError(f"{name} must be one integer index per answer ({n})")
        if lv.size and (lv.min() < 0 or lv.max() >= t):
            raise ParameterError(f"{name} must lie in [0, {t})")
        return lv.astype(np.int64)

    def _inputs(self, node: Node, answers: Any, level: Any, levels: Any) -> Any:
        return node.accept(_Inputs(self), answers, level, levels, 0)

    def _memo_input(self, items: np.ndarray) -> MemoInput:
        assert self._memo is not None and self._memos is not None
        return self._memo.input(self._memos, items)

    def ledger(self) -> LedgerView | None:
        """What this device's reports have spent (:meth:`pldp.ledger.Ledger.view`), or None without a ledger."""
        return None if self._ledger is None else self._ledger.view()

    # ------------------------------------------------------------------ reports
    def reports(self, answers: Sequence[Any] | np.ndarray, *, level: Any = None, levels: Any = None) -> ReportBatch:
        """Randomize a batch of answers (vectorised); one report per answer, in order.

        Returns a :class:`~pldp.deploy.wire.ReportBatch` (``.to_json()`` for the wire,
        ``.to_arrow()`` for report files). The words are drawn as if each report were made by
        :meth:`report` in turn, so the reports are the same bytes either way. With a memoized spec
        the memo store is locked and read (a :class:`~pldp.deploy.memostore.MemoStoreError` if it
        cannot be trusted), and written with the batch's new permanent responses before the batch
        is returned.
        """
        if self._memo is None:
            return self._batch(answers, level, levels)
        with self._memo.store.session() as memos:
            self._memos = memos
            try:
                batch = self._batch(answers, level, levels)
            finally:
                self._memos = None
        return batch

    def _batch(self, answers: Any, level: Any, levels: Any) -> ReportBatch:
        root = self.spec.root
        inp = self._inputs(root, answers, level, levels)
        if self._ledger is not None:  # checked and recorded before any word is drawn; the refusal
            # depends on n and the ledger only, new_values (per-value spend, display) never decides
            self._ledger.charge(self.spec, root.reports(inp), new_values(root, inp))
        return self._draw(answers, level, levels, inp)

    def _draw(self, answers: Any, level: Any, levels: Any, inp: Any = None) -> ReportBatch:
        """The reports of ``answers``, drawn as one block of words; when a rejection-sampling draw
        needs another word (it shifts the words of every later report), the two halves of the batch
        in turn, down to single reports (:meth:`_single`): the words are read in the same order, so
        the bytes are those of one report at a time, at the cost of a few more passes per rejection."""
        root = self.spec.root
        if inp is None:
            inp = self._inputs(root, answers, level, levels)
        n = root.reports(inp)
        cols = root.empty_columns(n)
        per = ID_WORDS + root.words(inp)
        starts = np.concatenate([[0], np.cumsum(per)[:-1]]).astype(np.int64)
        total = int(per.sum())
        words = self._stream.peek(total)
        try:
            root.draw(inp, Cursor(words, starts + ID_WORDS), np.arange(n), cols)
        except RejectedError:
            return self._halves(answers, level, levels)
        self._stream.advance(total)
        if self._memo is not None:
            assert self._memos is not None
            self.last_new_items = self._memo.keep(self._memos, inp)
            self.last_new_values = int(self.last_new_items.size)
        ids = words[starts[:, None] + np.arange(ID_WORDS)].astype(">u4").view(np.uint8).reshape(n, 16)
        return ReportBatch(self.spec.id, ids, cols, root)

    def _halves(self, answers: Any, level: Any, levels: Any) -> ReportBatch:
        """:meth:`_draw` of the first half of the answers, then of the second (one answer: :meth:`_single`)."""
        n = len(answers)
        if n == 1:
            return self._single(answers, level, levels)

        def rows(part: slice) -> tuple[Any, Any, Any]:
            lv = None if level is None else (level if np.ndim(level) == 0 else np.asarray(level)[part])
            return answers[part], lv, None if levels is None else np.asarray(levels)[part]

        parts = [self._draw(*rows(part)) for part in (slice(0, n // 2), slice(n // 2, n))]
        cols = {k: np.concatenate([p.columns[k] for p in parts]) for k in parts[0].columns}
        return ReportBatch(self.spec.id, np.concatenate([p.ids for p in parts]), cols, self.spec.root)

    def _single(self, answers: Any, level: Any, levels: Any) -> ReportBatch:
        """One report, drawing words one at a time so that rejections consume what they must."""
        root = self.spec.root
        inp = self._inputs(root, answers, level, levels)
        cols = root.empty_columns(1)
        ids = self._stream.peek(ID_WORDS).astype(">u4").view(np.uint8).reshape(1, 16).copy()
        self._stream.advance(ID_WORDS)
        root.draw_one(inp, self._stream, cols)
        return ReportBatch(self.spec.id, ids, cols, root)

    def report(self, answer: Any, *, level: int | None = None, levels: Sequence[int] | None = None) -> dict[str, Any]:
        """Randomize one user's answer: the wire report ``{format, spec, id, payload}``.

        ``level`` is her budget level (leveled protocols); ``levels`` one level per attribute (MPLDP).
        """
        batch = self.reports(
            [answer], level=None if level is None else [level], levels=None if levels is None else [list(levels)]
        )
        return next(batch.reports())
