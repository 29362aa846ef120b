"""The device client: randomize one user's answer by a campaign spec, with the OS's CSPRNG.

:class:`Client` runs a spec's sampler (``docs/wire-format.md`` §2) exactly: every decision is an
integer comparison of a uniform 32-bit word with a threshold of the spec. The words come from the
operating system's CSPRNG (``os.urandom``) by default, never from a seeded or fast generator
(google/rappor warns that its fast generator must never run in production); tests inject a word
source. A client checks the spec's id, structure and every privacy claim before it reports
anything (:func:`pldp.deploy.verify`), and never stores or logs an answer.

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

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from pldp.deploy.sampler import AttributesNode, DirectNode, LeveledNode, Node, PaddingNode, UnaryNode
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch, columns_of
from pldp.errors import ParameterError
from pldp.sampling import direct_draw, os_words, unary_bits, uniform_below

__all__ = ["Client", "WordSource"]

#: A source of randomness: ``source(n)`` returns ``n`` uniform words as a ``uint32`` array.
WordSource = Callable[[int], np.ndarray]

#: Words of the report id.
ID_WORDS = 4


class _RejectedError(Exception):
    """A rejection-sampling draw needed another word: redo the batch one report at a time."""


class _Stream:
    """Buffered reading of a word source, with look-ahead."""

    def __init__(self, source: WordSource) -> None:
        self._source = source
        self._buf = np.empty(0, dtype=np.uint32)

    def peek(self, n: int) -> np.ndarray:
        if self._buf.size < n:
            more = np.asarray(self._source(n - self._buf.size), dtype=np.uint32).reshape(-1)
            if more.size != n - self._buf.size:
                raise ParameterError("the word source returned the wrong number of words")
            self._buf = np.concatenate([self._buf, more])
        return self._buf[:n]

    def advance(self, n: int) -> None:
        self._buf = self._buf[n:]


class _Cursor:
    """Per-report positions in a block of words: ``take(rows, k)`` gives each row its next ``k``."""

    def __init__(self, words: np.ndarray, starts: np.ndarray) -> None:
        self.words = words
        self.pos = starts.astype(np.int64)

    def take(self, rows: np.ndarray, k: int) -> np.ndarray:
        idx = self.pos[rows, None] + np.arange(k)
        self.pos[rows] += k
        return self.words[idx]


def _count(node: Node, inp: Any) -> np.ndarray:
    """Words each report draws from ``node`` (with no rejection)."""
    n = _rows(inp)
    if isinstance(node, DirectNode):
        return np.ones(n, dtype=np.int64)
    if isinstance(node, UnaryNode):
        return np.full(n, node.d, dtype=np.int64)
    if isinstance(node, PaddingNode):
        return np.full(n, 2 + node.inner.d, dtype=np.int64)
    if isinstance(node, LeveledNode):
        level = inp[1]
        per = np.array([1 if isinstance(m, DirectNode) else m.d for m in node.items], dtype=np.int64)
        return per[level] + (1 if node.level_sampler is not None else 0)
    assert isinstance(node, AttributesNode)
    return np.sum([_count(p, i) for p, i in zip(node.parts, inp, strict=True)], axis=0)


def _rows(inp: Any) -> int:
    """Reports in a node's inputs: items; (items, levels); (flat, offsets, sizes); or a list of parts."""
    if isinstance(inp, np.ndarray):
        return inp.size
    if isinstance(inp, tuple):
        return inp[-1].size
    return _rows(inp[0])


def _draw(node: Node, inp: Any, cur: _Cursor, rows: np.ndarray, out: dict[str, np.ndarray], prefix: str) -> None:
    """Run ``node`` for the reports ``rows`` (their inputs ``inp``), writing payload columns."""
    if isinstance(node, DirectNode):
        w = cur.take(rows, 1)[:, 0]
        out[prefix + "item"][rows] = direct_draw(inp, w, node.table)
    elif isinstance(node, UnaryNode):
        a, b = node.thresholds
        bits = unary_bits(inp, cur.take(rows, node.d), a, b)
        out[prefix + "bits"][rows, : node.nbytes] = np.packbits(bits, axis=1)
    elif isinstance(node, PaddingNode):
        flat, offsets, sizes = inp
        w = cur.take(rows, 2)
        slot, ok1 = uniform_below(w[:, 0], np.maximum(sizes, node.ell))
        dummy, ok2 = uniform_below(w[:, 1], np.full(rows.size, node.ell))
        if not (ok1.all() and ok2.all()):
            raise _RejectedError
        own = slot < sizes
        item = np.where(
            own, flat[np.minimum(offsets + slot, max(flat.size - 1, 0))] if flat.size else 0, node.d + dummy
        )
        _draw(node.inner, item.astype(np.int64), cur, rows, out, prefix)
    elif isinstance(node, LeveledNode):
        x, level = inp
        for t, item_node in enumerate(node.items):
            sel = np.flatnonzero(level == t)
            if sel.size:
                _draw(item_node, x[sel], cur, rows[sel], out, prefix)
        if node.level_report == "perturbed":
            assert node.level_sampler is not None
            w = cur.take(rows, 1)[:, 0]
            out[prefix + "level"][rows] = direct_draw(level, w, node.level_sampler.table)
        elif node.level_report == "clear":
            out[prefix + "level"][rows] = level
    else:
        assert isinstance(node, AttributesNode)
        for i, (part, part_inp) in enumerate(zip(node.parts, inp, strict=True)):
            _draw(part, part_inp, cur, rows, out, f"{prefix}a{i}.")


class Client:
    """Randomize answers by a campaign spec on the user's device.

    Parameters
    ----------
    spec : Spec, dict or str
        The campaign spec (its JSON is read with :meth:`Spec.from_json`: a malformed or altered
        spec, or one whose privacy claim fails, raises :class:`~pldp.errors.SpecError`).
    random : callable, optional
        ``random(n)`` returns ``n`` uniform ``uint32`` words. Default: the OS CSPRNG
        (:func:`pldp.sampling.os_words`). Inject a source only for tests.

    Notes
    -----
    Answers are item labels or indices; for padding-and-sampling a set of them; for MPLDP one per
    attribute. ``level`` (PLDP-FEBSF and the other leveled protocols: the user's budget level, an
    index) and ``levels`` (MPLDP: one level index per attribute) are her choices.
    """

    def __init__(self, spec: Spec | dict[str, Any] | str, random: WordSource | None = None) -> None:
        self.spec = spec if isinstance(spec, Spec) else Spec.from_json(spec)
        self._stream = _Stream(random if random is not None else os_words)
        root = self.spec.root
        labels = self.spec.labels
        lists = labels if isinstance(root, AttributesNode) else [labels]
        self._index = [{lab: i for i, lab in enumerate(lab_list)} for lab_list in lists]

    # ------------------------------------------------------------------ inputs
    def _items(self, answers: Any, part: int, n_items: int) -> np.ndarray:
        """Answers (indices or labels) as item indices."""
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

    def _inputs(self, node: Node, answers: Any, level: Any, levels: Any, part: int = 0) -> Any:
        if isinstance(node, (DirectNode, UnaryNode)):
            return self._items(answers, part, node.d)
        if isinstance(node, PaddingNode):
            sets = [sorted(set(self._items(list(s), part, node.d).tolist())) for s in answers]
            for s, raw in zip(sets, answers, strict=True):
                if len(s) != len(list(raw)):
                    raise ParameterError(f"an item-set repeats an item: {list(raw)!r}")
            sizes = np.array([len(s) for s in sets], dtype=np.int64)
            offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
            flat = np.array([v for s in sets for v in s], dtype=np.int64)
            return flat, offsets, sizes
        if isinstance(node, LeveledNode):
            x = self._items(answers, part, node.d)
            return x, self._levels(level, x.size, node.t, "level")
        assert isinstance(node, AttributesNode)
        rows = [list(r) for r in answers]
        if any(len(r) != len(node.parts) for r in rows):
            raise ParameterError(f"each answer needs one value per attribute ({len(node.parts)})")
        lv = None if levels is None else np.asarray(levels).reshape(len(rows), len(node.parts))
        out = []
        for i, p in enumerate(node.parts):
            col = [r[i] for r in rows]
            out.append(self._inputs(p, col, None if lv is None else lv[:, i], None, i))
        return out

    # ------------------------------------------------------------------ reports
    def reports(self, answers: Sequence[Any] | np.ndarray, *, level: Any = None, levels: Any = None) -> ReportBatch:
        """Randomize a batch of answers (vectorised); one report per answer, in order.

        Returns a :class:`~pldp.deploy.wire.ReportBatch` (``.to_json()`` for the wire,
        ``.to_arrow()`` for report files). The words are drawn as if each report were made by
        :meth:`report` in turn, so the reports are the same bytes either way.
        """
        root = self.spec.root
        inp = self._inputs(root, answers, level, levels)
        n = _rows(inp)
        cols: dict[str, np.ndarray] = {}
        for c in columns_of(root):
            cols[c.name] = np.zeros((n, c.nbytes), np.uint8) if c.kind == "bits" else np.full(n, -1, np.int64)
        per = ID_WORDS + _count(root, inp)
        starts = np.concatenate([[0], np.cumsum(per)[:-1]]).astype(np.int64)
        total = int(per.sum())
        words = self._stream.peek(total)
        cur = _Cursor(words, starts + ID_WORDS)
        try:
            _draw(root, inp, cur, np.arange(n), cols, "")
        except _RejectedError:  # a rejected draw shifts the words of every later report: one at a time
            return self._one_by_one(answers, level, levels)
        self._stream.advance(total)
        ids = words[starts[:, None] + np.arange(ID_WORDS)].astype(">u4").view(np.uint8).reshape(n, 16)
        return ReportBatch(self.spec.id, ids, cols, root)

    def _one_by_one(self, answers: Any, level: Any, levels: Any) -> ReportBatch:
        parts = []
        n = len(answers)
        for i in range(n):
            lv = None if level is None else (level if np.ndim(level) == 0 else [np.asarray(level)[i]])
            lvs = None if levels is None else [np.asarray(levels)[i]]
            parts.append(self._single(answers[i : i + 1], lv, lvs))
        cols = {k: np.concatenate([p.columns[k] for p in parts]) for k in parts[0].columns}
        return ReportBatch(self.spec.id, np.concatenate([p.ids for p in parts]), cols, self.spec.root)

    def _single(self, answers: Any, level: Any, levels: Any) -> ReportBatch:
        """One report, drawing words one at a time so that rejections consume what they must."""
        root = self.spec.root
        inp = self._inputs(root, answers, level, levels)
        cols: dict[str, np.ndarray] = {}
        for c in columns_of(root):
            cols[c.name] = np.zeros((1, c.nbytes), np.uint8) if c.kind == "bits" else np.full(1, -1, np.int64)
        ids = self._stream.peek(ID_WORDS).astype(">u4").view(np.uint8).reshape(1, 16).copy()
        self._stream.advance(ID_WORDS)
        _draw_single(root, inp, self._stream, cols, "")
        return ReportBatch(self.spec.id, ids, cols, root)

    def report(self, answer: Any, *, level: int | None = None, levels: Sequence[int] | None = None) -> dict[str, Any]:
        """Randomize one user's answer: the wire report ``{format, spec, id, payload}``.

        ``level`` is her budget level (leveled protocols); ``levels`` one level per attribute (MPLDP).
        """
        batch = self.reports(
            [answer], level=None if level is None else [level], levels=None if levels is None else [list(levels)]
        )
        return next(batch.reports())


def _draw_single(node: Node, inp: Any, stream: _Stream, cols: dict[str, np.ndarray], prefix: str) -> None:
    """:func:`_draw` for one report, reading the stream as it goes (padding's rejections)."""
    if isinstance(node, PaddingNode):
        flat, _, sizes = inp

        def uniform(m: int) -> int:
            while True:
                w = stream.peek(1)
                stream.advance(1)
                v, ok = uniform_below(w, np.array([m]))
                if ok[0]:
                    return int(v[0])

        slot = uniform(max(int(sizes[0]), node.ell))
        dummy = uniform(node.ell)
        item = int(flat[slot]) if slot < sizes[0] else node.d + dummy
        _draw_single(node.inner, np.array([item]), stream, cols, prefix)
        return
    if isinstance(node, AttributesNode):
        for i, (part, part_inp) in enumerate(zip(node.parts, inp, strict=True)):
            _draw_single(part, part_inp, stream, cols, f"{prefix}a{i}.")
        return
    need = int(_count(node, inp)[0])
    cur = _Cursor(stream.peek(need), np.zeros(1, dtype=np.int64))
    _draw(node, inp, cur, np.arange(1), cols, prefix)
    stream.advance(need)
