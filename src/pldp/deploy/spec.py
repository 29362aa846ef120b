"""Campaign specs (``pldp.spec/1``): one JSON document that fully defines a collection.

A spec holds the question, the answer labels, the oracle's canonical parameters (for the server's
estimator) and the sampler (the client program, every probability an integer threshold over
``2**32``; :mod:`pldp.channel`). Its :attr:`Spec.id` is the SHA-256 of its JCS text
(:mod:`pldp.deploy.jcs`), so any change is a new id, and every tally decoded from its reports
carries that id as its fingerprint. The format is documented in ``docs/wire-format.md``.

Reading a spec needs only the channel (:mod:`pldp.channel`: the sampler and its claims); the
oracle, the collector's estimator, is rebuilt from the registry when it is first asked for
(:meth:`Spec.mechanism`), so a device that reads a spec with ``check_oracle=False`` loads neither
the mechanisms nor the estimators.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any

from pldp.channel.claims import check_claims
from pldp.channel.node import Node
from pldp.channel.parse import parse_node
from pldp.channel.sampling import GRID_BITS
from pldp.deploy.caps import CAP_MEMBERS, MAX_ROUNDS, check_caps
from pldp.deploy.jcs import jcs
from pldp.deploy.labels import (
    AnswerRange,
    HashedAnswers,
    answer_labels,
    check_labels,
    labels_json,
    oracle_labels,
    text_labels,
)
from pldp.errors import SpecError
from pldp.fingerprint import FINGERPRINT_LENGTH, canonical, is_fingerprint

if TYPE_CHECKING:
    from pldp.heavy import HeavyHitter
    from pldp.oracle import FrequencyOracle

__all__ = ["CAP_MEMBERS", "FORMAT", "MAX_ROUNDS", "Spec", "memo_key_default", "read_spec", "relabel", "spec_id"]

#: The version tag of the spec format.
FORMAT = "pldp.spec/1"


def spec_id(content: dict[str, Any]) -> str:
    """The id of a spec's content (every member but ``id``): 32 hex digits of SHA-256 of its JCS text."""
    body = {k: v for k, v in content.items() if k != "id"}
    return hashlib.sha256(jcs(body).encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def relabel(params: dict[str, Any], labels: list[str] | dict[str, Any]) -> dict[str, Any]:
    """``params`` with the item labels replaced (also in a padding protocol's base and a memoized
    chain's permanent mechanism): a list of labels, or ``{"range": d}`` (the items ``0 .. d-1``; the
    hashed form's buckets are those too)."""
    out = dict(params)
    if "labels" in out:
        out["labels"] = oracle_labels(labels)
    for nested in ("base", "permanent"):
        if nested in out:
            out[nested] = relabel(out[nested], labels)
    return out


def _check_answers(root: Node, labels: Any, question: Any) -> None:
    """Labels (and, for several attributes, questions) that fit the sampler's inputs."""
    if root.multi_attribute:
        parts = [node for _, node in root.by_attribute]
        if not isinstance(labels, list) or len(labels) != len(parts):
            raise SpecError(f"labels must hold one list per attribute ({len(parts)})")
        if not isinstance(question, list) or len(question) != len(parts):
            raise SpecError(f"question must hold one question per attribute ({len(parts)})")
        for i, (lab, part) in enumerate(zip(labels, parts, strict=True)):
            d = _answers(part)
            n = check_labels(lab, f"labels[{i}]")
            if n != d:
                raise SpecError(f"labels[{i}] has {n} answers but attribute {i} takes {d}")
        return
    if not isinstance(question, str):
        raise SpecError("question must be a string")
    if root.text_bytes is not None:
        if labels != text_labels(root.text_bytes) or type(labels["text"]) is not int:  # True == 1: refused
            raise SpecError(f"labels of a free-text sampler must be {text_labels(root.text_bytes)}, got {labels!r}")
        return
    n = check_labels(labels, "labels")
    if n != _answers(root):
        raise SpecError(f"labels has {n} answers but the sampler takes {_answers(root)}")


def _answers_form(labels: Any, d: int) -> list[str] | dict[str, Any]:
    """The spec's labels (one attribute's) for :meth:`Spec.from_mechanism`'s ``labels``: ``"range"``
    for ``{"range": d}``, ``"hashed"`` for the hashed form, else the labels as strings."""
    if isinstance(labels, str):
        if labels not in ("range", "hashed"):
            raise SpecError(f'labels must be a list of labels or "range" (or "hashed"), got {labels!r}')
        return labels_json(HashedAnswers(d) if labels == "hashed" else AnswerRange(d))
    return [str(v) for v in labels]


def _answers(node: Node) -> int:
    """The number of answers a node takes (``d``; every node but the attributes' has one)."""
    d = getattr(node, "d", None)
    assert isinstance(d, int), node.kind  # parse_node refuses nested attributes
    return d


#: The longest memo key (characters).
MEMO_KEY_MAX = 256


def memo_key_default(content: dict[str, Any]) -> str:
    """The default memo key of a memoized spec: ``"spec:"`` and the id of its content without the
    ``memo`` and ``caps`` members (so the rounds of a campaign, and any campaign asking the same
    question with the same labels and sampler, share one permanent response per value)."""
    return "spec:" + spec_id({k: v for k, v in content.items() if k not in ("memo", "caps")})


def _check_memo(root: Node, memo: Any) -> None:
    """A ``memo`` member exactly when the sampler is memoized: ``{"key": a non-empty string}``."""
    if not root.memoized:
        if memo is not None:
            raise SpecError("the spec has a memo member but its sampler is not memoized")
        return
    if memo is None:
        raise SpecError("the sampler is memoized: the spec must state its memo key ({'memo': {'key': ...}})")
    if not isinstance(memo, dict) or set(memo) != {"key"}:
        raise SpecError("memo must be an object with exactly 'key'")
    key = memo["key"]
    if not isinstance(key, str) or not 0 < len(key) <= MEMO_KEY_MAX:
        raise SpecError(f"memo.key must be a string of 1 to {MEMO_KEY_MAX} characters, got {key!r}")


def _json_object(data: Any) -> dict[str, Any]:
    """A spec's JSON object from its text (or the object itself)."""
    if isinstance(data, (str, bytes)):
        try:
            data = json.loads(data)
        except json.JSONDecodeError as exc:
            raise SpecError(f"the spec is not valid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise SpecError("a spec must be a JSON object")
    return data


def read_spec(data: Any) -> tuple[Node, str]:
    """The sampler root and id of a spec's JSON (text or parsed), after checking its format, its
    id, its labels and the sampler's structure; the oracle is not rebuilt (:func:`verify` needs
    only the sampler)."""
    data = _json_object(data)
    if data.get("format") != FORMAT:
        raise SpecError(f"unknown spec format {data.get('format')!r}; this pldp reads {FORMAT!r}")
    missing = {"id", "question", "labels", "oracle", "sampler"} - data.keys()
    if missing:
        raise SpecError(f"the spec lacks {sorted(missing)}")
    extra = data.keys() - {"format", "id", "question", "labels", "oracle", "sampler", "memo", "caps"}
    if extra:
        raise SpecError(f"the spec has unknown members {sorted(extra)}")
    if "caps" in data:
        check_caps(data["caps"])
    if not is_fingerprint(data["id"]):
        raise SpecError(f"the spec id must be {FINGERPRINT_LENGTH} lower-case hex digits, got {data['id']!r}")
    try:
        actual = spec_id(data)
    except (TypeError, ValueError) as exc:  # JCS refuses an integer beyond 2**53, a non-finite number
        raise SpecError(f"the spec holds a value its id cannot be computed over: {str(exc)[:200]}") from None
    if actual != data["id"]:
        raise SpecError(
            f"the spec id {data['id']} does not match its content (which hashes to {actual}): it was altered"
        )
    sampler = data["sampler"]
    if not isinstance(sampler, dict) or set(sampler) != {"grid_bits", "root"}:
        raise SpecError("sampler must be an object with exactly 'grid_bits' and 'root'")
    if sampler["grid_bits"] != GRID_BITS:
        raise SpecError(f"sampler.grid_bits must be {GRID_BITS}, got {sampler['grid_bits']!r}")
    root = parse_node(sampler["root"])
    _check_answers(root, data["labels"], data["question"])
    _check_memo(root, data.get("memo"))
    return root, data["id"]


class Spec:
    """A campaign spec: question, labels, oracle parameters and the sampler, with a content id.

    Build one with :meth:`from_mechanism`; read one with :meth:`from_json`, which refuses a
    malformed or altered spec and one whose privacy claim fails. Specs are immutable; equality is
    by id.

    Examples
    --------
    >>> import pldp
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Your OS?", labels=["linux", "mac", "windows"])
    >>> Spec.from_json(spec.to_json()) == spec
    True
    >>> spec.mechanism().fingerprint == spec.id
    True
    """

    def __init__(self, data: dict[str, Any], root: Node) -> None:
        self._data = data
        self._root = root

    # ------------------------------------------------------------------ construction
    @classmethod
    def from_mechanism(
        cls,
        oracle: FrequencyOracle,
        *,
        question: Any,
        labels: Any = None,
        memo_key: str | None = None,
        caps: dict[str, float] | None = None,
    ) -> Spec:
        """The spec of a pldp mechanism or protocol.

        Parameters
        ----------
        oracle : FrequencyOracle
            Any pldp mechanism or protocol.
        question : str (MPLDP: one per attribute)
            What respondents are asked.
        labels : list of str, "range" or "hashed", optional (MPLDP: one of these per attribute)
            The answers, in index order; default the oracle's labels as strings. The spec's
            oracle uses these labels. ``"range"``: the answers are the integers ``0 .. d-1``,
            written ``{"range": d}`` (a spec of a few hundred bytes over 10^6 items), their labels
            their decimal strings; the oracle's labels are then ``{"range": d}`` too.
            ``"hashed"``: an answer is any text, hashed to one of d buckets
            (:func:`~pldp.deploy.labels.text_bucket`), written ``{"hashed": d, "hash": "xxh32",
            "normalize": "NFC"}``; the oracle's labels are the buckets, ``{"range": d}``.
        memo_key : str, optional
            For a memoized chain (``pldp.LGRR``, ``pldp.LOUE``, ...): which campaigns share a
            device's permanent responses (the same key, the same permanent response per value).
            Default ``"spec:"`` and the id of the spec's content without its key
            (:func:`memo_key_default`): the rounds of this campaign, and any campaign with the same
            question, labels and sampler. Refused for a chain that is not memoized.
        caps : dict, optional
            The campaign's caps on one device's reports of its family (``docs/wire-format.md``
            §1.3): ``"day"`` and ``"total"``, the most it may spend per UTC day and in all (in
            epsilon, as :mod:`pldp.ledger` charges it), and ``"rounds"``, the most reports it
            sends (a positive integer); one or more. Part of the content (the id), not of the
            default memo key.
        """
        from pldp.oracle import FrequencyOracle  # loaded already: the caller built the oracle
        from pldp.registry import oracle_from_params

        if not isinstance(oracle, FrequencyOracle):
            raise SpecError(f"expected a pldp mechanism or protocol, got {type(oracle).__name__}")
        params = canonical(oracle.params())
        root = oracle.sampler()
        if memo_key is not None and not root.memoized:
            raise SpecError(f"memo_key is for memoized chains; {type(oracle).__name__} is not one")
        if root.multi_attribute:
            parts = [part for _, part in root.by_attribute]
            if labels is None:
                labels = [[str(v) for v in range(_answers(part))] for part in parts]
            elif isinstance(labels, str):
                labels = [labels] * len(parts)
            if len(labels) != len(parts):
                raise SpecError(f"labels must hold one list per attribute ({len(parts)})")
            labels = [_answers_form(lab, _answers(part)) for lab, part in zip(labels, parts, strict=True)]
        else:
            labels = _answers_form(oracle.domain.labels if labels is None else labels, _answers(root))
            if "labels" in params or "base" in params:
                params = relabel(params, labels)
                oracle = oracle_from_params(params) if params != canonical(oracle.params()) else oracle
                root = oracle.sampler()
        data = {
            "format": FORMAT,
            "question": canonical(question),
            "labels": labels,
            "oracle": params,
            "sampler": {"grid_bits": GRID_BITS, "root": root.to_json()},
        }
        if root.memoized:
            data["memo"] = {"key": memo_key_default(json.loads(jcs(data))) if memo_key is None else memo_key}
        if caps is not None:
            check_caps(caps)
            data["caps"] = dict(caps)
        data = json.loads(jcs(data))  # the JSON values exactly as a reader will see them
        data["id"] = spec_id(data)
        return cls._load(data)

    @classmethod
    def from_heavy(
        cls, protocol: HeavyHitter, *, question: str, level: int = 0, caps: dict[str, float] | None = None
    ) -> Spec:
        """The spec of a free-text campaign: a heavy-hitter protocol's report at one budget level.

        Parameters
        ----------
        protocol : PEM, TreeHist or SFP
            The protocol (:mod:`pldp.heavy`); the spec's ``oracle`` member is its
            :meth:`~pldp.heavy.HeavyHitter.params` and the level.
        question : str
            What respondents are asked; they answer in their own words.
        level : int, default 0
            The budget level whose node the devices run (a campaign per level: a level in the clear).
        caps : dict, optional
            As for :meth:`from_mechanism`.

        The labels are ``{"text": max_bytes, "normalize": "NFC"}``: the answers are discovered, not
        listed (:meth:`heavy_hitter` rebuilds the protocol, whose ``discover`` reads the reports).
        """
        from pldp.heavy import HeavyHitter

        if not isinstance(protocol, HeavyHitter):
            raise SpecError(f"expected PEM, TreeHist or SFP, got {type(protocol).__name__}")
        root = protocol.node(level)
        data: dict[str, Any] = {
            "format": FORMAT,
            "question": canonical(question),
            "labels": text_labels(protocol.max_bytes),
            "oracle": {**protocol.params(), "level": int(level)},
            "sampler": {"grid_bits": GRID_BITS, "root": root.to_json()},
        }
        if caps is not None:
            check_caps(caps)
            data["caps"] = dict(caps)
        data = json.loads(jcs(data))
        data["id"] = spec_id(data)
        return cls._load(data)

    @classmethod
    def from_json(cls, text: str | bytes | dict[str, Any], *, check_oracle: bool = True) -> Spec:
        """Read a spec; :class:`~pldp.errors.SpecError` when it is malformed, altered (id), not
        pldp's own oracle with its own thresholds, or when a privacy claim fails.

        Parameters
        ----------
        text : str, bytes or dict
            The spec's JSON text, or its parsed object.
        check_oracle : bool, default True
            Rebuild the oracle now and check that the sampler's thresholds are its own. A device
            client passes False (:class:`pldp.client.Client`, like ``pldp-client.mjs``): it runs
            the sampler, whose privacy claims are checked either way, never the oracle (the
            collector's estimator), so it loads no mechanism or estimator; the oracle is then
            rebuilt and checked on the first :meth:`mechanism`, which raises the same
            :class:`~pldp.errors.SpecError`.
        """
        data = _json_object(text)
        return cls._load(json.loads(jcs(data)) if _jsonable(data) else data, check_oracle=check_oracle)

    @classmethod
    def _load(cls, data: dict[str, Any], *, check_oracle: bool = True) -> Spec:
        """The spec of checked JSON: format, id, structure, every privacy claim, and (``check_oracle``)
        the oracle."""
        root, spec_id = read_spec(data)
        spec = cls(data, root)
        result = check_claims(root, spec_id)
        if not result.holds:
            bad = result.failures[0]
            raise SpecError(
                f"the spec's privacy claim fails: {bad.part}, {bad.subject}: realised epsilon "
                f"{bad.realised:.9g} > claimed {bad.claimed:.9g} ({len(result.failures)} failing check(s))"
            )
        if check_oracle:
            spec.heavy_hitter() if spec.free_text else spec.mechanism()
        return spec

    # ------------------------------------------------------------------ accessors
    @property
    def id(self) -> str:
        """The content hash: 32 hex digits; the fingerprint of every tally of this campaign."""
        return str(self._data["id"])

    @property
    def question(self) -> Any:
        """The question (one per attribute for MPLDP)."""
        return self._data["question"]

    @property
    def labels(self) -> Sequence[Any]:
        """The answer labels (one sequence per attribute for MPLDP): a list of strings, or for the
        range form ``{"range": d}`` an :class:`~pldp.deploy.labels.AnswerRange` (the decimal
        strings of ``0 .. d-1``, made when asked for), for the hashed form a
        :class:`~pldp.deploy.labels.HashedAnswers` (its buckets' decimal strings)."""
        if self._root.multi_attribute:
            return [answer_labels(lab) for lab in self._data["labels"]]
        if self.free_text:
            return []  # a free-text campaign lists no answers: they are discovered
        return answer_labels(self._data["labels"])

    @property
    def root(self) -> Node:
        """The sampler's root node."""
        return self._root

    @property
    def free_text(self) -> bool:
        """Whether the answers are free text discovered by a heavy-hitter sampler (:meth:`from_heavy`), not listed."""
        return self._root.text_bytes is not None

    @property
    def memo_key(self) -> str | None:
        """Which campaigns share a device's permanent responses (a memoized sampler), else None."""
        memo = self._data.get("memo")
        return None if memo is None else str(memo["key"])

    @property
    def caps(self) -> dict[str, float] | None:
        """The campaign's caps on one device's reports of this spec's family (``{"day": eps, "total": eps,
        "rounds": n}``, one or more; ``rounds`` an int), else None (:mod:`pldp.ledger`)."""
        caps = self._data.get("caps")
        return None if caps is None else {k: int(v) if k == "rounds" else float(v) for k, v in caps.items()}

    @property
    def rounds_cap(self) -> int | None:
        """The most reports one device sends on this spec's family (its ``caps.rounds``: one per round
        of a recurring campaign), else None: no limit."""
        caps = self._data.get("caps") or {}
        return int(caps["rounds"]) if "rounds" in caps else None

    @property
    def oracle_params(self) -> dict[str, Any]:
        """The oracle's canonical parameters."""
        return dict(self._data["oracle"])

    @cached_property
    def _oracle(self) -> FrequencyOracle:
        from pldp.registry import oracle_from_params  # imports the module of the oracle's class

        oracle = oracle_from_params(self._data["oracle"])
        oracle.bind_fingerprint(self.id)
        if oracle.sampler() != self._root:
            raise SpecError("the sampler's thresholds are not those of the spec's oracle")
        return oracle

    @cached_property
    def _heavy(self) -> HeavyHitter:
        from pldp.errors import ParameterError
        from pldp.heavy import heavy_from_params

        oracle = self._data["oracle"]
        if not isinstance(oracle, dict):
            raise SpecError("the spec's oracle must be an object: a heavy-hitter protocol's parameters and level")
        params = dict(oracle)
        level = params.pop("level", None)
        if isinstance(level, bool) or not isinstance(level, int):
            raise SpecError(f"the spec's oracle.level must be an integer level index, got {level!r}")
        try:
            protocol = heavy_from_params(params)
            node = protocol.node(level)
        except ParameterError as err:
            raise SpecError(f"the spec's oracle is no heavy-hitter protocol: {err}") from None
        if canonical(protocol.params()) != canonical(params):  # one protocol, one form, one spec id
            raise SpecError("the spec's oracle is not written as pldp writes its protocol's parameters")
        if node != self._root:
            raise SpecError("the sampler is not the node of the spec's heavy-hitter protocol at its level")
        return protocol

    def heavy_hitter(self) -> HeavyHitter:
        """The heavy-hitter protocol of a free-text spec (:meth:`from_heavy`), rebuilt from its ``oracle``
        member and checked: :class:`~pldp.errors.SpecError` if the sampler is not its node at the level."""
        if not self.free_text:
            raise SpecError("this spec's answers are listed: its estimator is mechanism()")
        return self._heavy

    def mechanism(self) -> FrequencyOracle:
        """The oracle this spec runs, identified by the spec's id: its tallies carry :attr:`id`.

        Rebuilt from :attr:`oracle_params` on the first call (importing its class's module), and
        checked: :class:`~pldp.errors.SpecError` if the sampler's thresholds are not its own. A
        free-text spec has none: its answers are discovered (:meth:`heavy_hitter`).
        """
        if self.free_text:
            raise SpecError("a free-text spec has no frequency oracle: its protocol is heavy_hitter()")
        return self._oracle

    def to_dict(self) -> dict[str, Any]:
        """The spec as JSON values (a deep copy)."""
        return json.loads(jcs(self._data))

    def to_json(self, indent: int | None = 2) -> str:
        """The spec's JSON text (members in a fixed order; ``indent=None`` for one line)."""
        order = ["format", "id", "question", "labels", "oracle", "sampler", "memo", "caps"]
        return json.dumps({k: self._data[k] for k in order if k in self._data}, indent=indent, ensure_ascii=False)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Spec) and other.id == self.id

    def __hash__(self) -> int:
        return hash(self.id)

    def __repr__(self) -> str:
        return f"Spec(id={self.id!r}, kind={self._root.kind!r}, question={self.question!r})"


def _jsonable(data: Any) -> bool:
    try:
        jcs(data)
    except (TypeError, ValueError):
        return False
    return True
