"""A spec's answer labels in any of their three forms (``docs/wire-format.md`` §1).

A spec's ``labels`` (one entry per attribute for MPLDP) is the list of its answers' strings, in
index order; or ``{"range": d}``: the answers are the integers ``0 .. d-1``, each labelled by its
decimal string; or ``{"hashed": d, "hash": "xxh32", "normalize": "NFC"}``: an answer is any text,
mapped to one of ``d`` buckets (:func:`text_bucket`), and the buckets ``0 .. d-1`` are labelled by
their decimal strings. The range form keeps a spec over 10^6 items a few kilobytes; both objects are
opt-in (``Spec.from_mechanism(..., labels="range")`` or ``labels="hashed"``). Here the forms are read
alike: :func:`check_labels` checks one, :func:`answer_labels` gives its answers as a ``Sequence[str]``
(the list itself, an :class:`AnswerRange` that makes no d strings, or a :class:`HashedAnswers` of
the buckets), :func:`label_index` maps an answer's label (for the hashed form, its text) to its
index, and :func:`labels_json` gives back the JSON form.

Examples
--------
>>> labels = answer_labels({"range": 1000})
>>> len(labels), labels[7], labels.index("999"), "0999" in labels
(1000, '7', 999, False)
>>> label_index(labels)["12"]
12
>>> text_bucket(" café ", 1000) == text_bucket("cafe\\u0301", 1000)   # NFC, then trimmed
True
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, overload

from pldp.errors import ParameterError, SpecError
from pldp.text import MAX_TEXT_BYTES, TRIMMED, normalize_text
from pldp.xxh32 import xxh32

__all__ = [
    "HASHED_FORM",
    "MAX_TEXT_BYTES",
    "AnswerRange",
    "HashedAnswers",
    "answer_labels",
    "bucket_names",
    "check_labels",
    "label_index",
    "labels_json",
    "normalize_text",
    "oracle_labels",
    "text_bucket",
    "text_labels",
]

#: The members of the hashed form besides ``"hashed": d``: its hash and its normalisation (the only
#: ones this version knows; another rule would be another value, so an older reader refuses it).
HASHED_FORM = {"hash": "xxh32", "normalize": "NFC"}

#: The labels of a free-text spec (a heavy-hitter sampler): ``{"text": max_bytes, "normalize": "NFC"}``;
#: its answers are discovered, not listed.
TEXT_NORMALIZE = "NFC"


def text_labels(max_bytes: int) -> dict[str, Any]:
    """The labels member of a free-text spec whose sampler keeps ``max_bytes`` bytes of an answer."""
    return {"text": int(max_bytes), "normalize": TEXT_NORMALIZE}


#: The decimal label of an integer answer: no sign, no leading zero, no space.
_DECIMAL = re.compile(r"0|[1-9][0-9]*")


class AnswerRange(Sequence[str]):
    """The labels of the answers ``0 .. d-1``: their decimal strings, made one at a time.

    Parameters
    ----------
    d : int
        The number of answers.
    """

    __slots__ = ("d",)

    def __init__(self, d: int) -> None:
        self.d = d

    def __len__(self) -> int:
        return self.d

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [str(v) for v in range(self.d)[i]]
        return str(range(self.d)[i])  # an IndexError beyond d, negative indices from the end

    def __iter__(self) -> Iterator[str]:
        return map(str, range(self.d))

    def __contains__(self, label: object) -> bool:
        return self.find(label) is not None

    def find(self, label: object) -> int | None:
        """The index of ``label`` (a decimal string below d, written as :class:`str` writes it), else None."""
        if not isinstance(label, str) or len(label) > len(str(self.d)) or not _DECIMAL.fullmatch(label):
            return None
        i = int(label)
        return i if i < self.d else None

    def index(self, label: Any, start: int = 0, stop: int | None = None) -> int:
        """The index of ``label``; ValueError if it is not one of the answers (or not in ``start:stop``)."""
        i = self.find(label)
        if i is None or not start <= i < (self.d if stop is None else stop):
            raise ValueError(f"{label!r} is not one of the answers 0..{self.d - 1}")
        return i

    def count(self, label: Any) -> int:
        return int(label in self)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and other.d == self.d

    def __hash__(self) -> int:
        return hash(("range", self.d))

    def __repr__(self) -> str:
        return f"AnswerRange({self.d})"


class HashedAnswers(AnswerRange):
    """The ``d`` buckets of a hashed form, labelled ``"0" .. "d-1"`` like an :class:`AnswerRange`; an
    answer's text reaches its bucket through :func:`text_bucket` (its :func:`label_index`), never
    through these labels."""

    __slots__ = ()

    def __hash__(self) -> int:
        return hash(("hashed", self.d))

    def __repr__(self) -> str:
        return f"HashedAnswers({self.d})"


def text_bucket(text: Any, d: int) -> int:
    """The bucket of a hashed answer: ``XXH32(UTF-8 of normalize_text(text), seed 0) mod d``."""
    return xxh32(normalize_text(text).encode("utf-8")) % d


class _RangeIndex(Mapping[str, int]):
    """The index of each label of an :class:`AnswerRange`, as a dict of its d labels would give it."""

    __slots__ = ("labels",)

    def __init__(self, labels: AnswerRange) -> None:
        self.labels = labels

    def __getitem__(self, label: str) -> int:
        i = self.labels.find(label)
        if i is None:
            raise KeyError(label)
        return i

    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self) -> Iterator[str]:
        return iter(self.labels)


class _HashedIndex(Mapping[str, int]):
    """The bucket of each answer's text (:func:`text_bucket`): a mapping that hashes, of no listed keys."""

    __slots__ = ("labels",)
    #: Answers are text only: an index would skip the hash.
    takes_text = True

    def __init__(self, labels: HashedAnswers) -> None:
        self.labels = labels

    def __getitem__(self, text: str) -> int:
        return text_bucket(text, self.labels.d)

    def __len__(self) -> int:
        return 0

    def __iter__(self) -> Iterator[str]:
        return iter(())


def _is_count(d: Any) -> bool:
    return isinstance(d, int) and not isinstance(d, bool) and d >= 2


def check_labels(value: Any, path: str) -> int:
    """The number of answers of a spec's labels (one attribute's): a list of at least 2 distinct
    strings, ``{"range": d}``, or ``{"hashed": d, "hash": "xxh32", "normalize": "NFC"}``, with d an
    integer of at least 2; :class:`~pldp.errors.SpecError` naming ``path`` otherwise (any other
    object: other or missing members, another hash or normalisation, a boolean, a float, below 2)."""
    if isinstance(value, dict) and "hashed" in value:
        d = value["hashed"]
        if value.keys() != {"hashed", *HASHED_FORM} or not _is_count(d):
            raise SpecError(f'{path} must be {{"hashed": d, "hash", "normalize"}} with d an integer >= 2')
        for key, known in HASHED_FORM.items():
            if value[key] != known:
                raise SpecError(f"{path}.{key} must be {known!r} (the only one this version knows), got {value[key]!r}")
        return int(d)
    if isinstance(value, dict):
        d = value.get("range")
        if set(value) != {"range"} or not isinstance(d, int) or isinstance(d, bool) or d < 2:
            raise SpecError(
                f'{path} must be a list of labels or {{"range": d}} with d an integer >= 2 and no other member'
            )
        return d
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, str) for v in value):
        raise SpecError(f'{path} must be a list of at least 2 strings (or {{"range": d}})')
    seen: set[str] = set()
    dup = [v for v in value if v in seen or seen.add(v)]  # type: ignore[func-returns-value]
    if dup:
        raise SpecError(f"{path} has duplicate labels: {dup[:5]}")
    return len(value)


def answer_labels(value: Any) -> Sequence[str]:
    """The answers' labels of one checked labels value (:func:`check_labels`): a copy of the list,
    an :class:`AnswerRange` for ``{"range": d}``, a :class:`HashedAnswers` for the hashed form."""
    if isinstance(value, dict):
        return HashedAnswers(int(value["hashed"])) if "hashed" in value else AnswerRange(int(value["range"]))
    return list(value)


def label_index(labels: Sequence[Any]) -> Mapping[Any, int]:
    """Each label's index (a dict; for an :class:`AnswerRange`, a mapping that parses the label; for
    :class:`HashedAnswers`, one that hashes the answer's text, :func:`text_bucket`)."""
    if isinstance(labels, HashedAnswers):
        return _HashedIndex(labels)
    if isinstance(labels, AnswerRange):
        return _RangeIndex(labels)
    return {lab: i for i, lab in enumerate(labels)}


def labels_json(labels: Any) -> Any:
    """The JSON form of labels (one attribute's, or a list of several): ``{"range": d}`` for an
    :class:`AnswerRange` (or a range form, copied), the hashed form for :class:`HashedAnswers`, else the list."""
    if isinstance(labels, HashedAnswers):
        return {"hashed": labels.d, **HASHED_FORM}
    if isinstance(labels, AnswerRange):
        return {"range": labels.d}
    if isinstance(labels, dict):
        return dict(labels)
    return [labels_json(lab) if isinstance(lab, (AnswerRange, dict, list)) else lab for lab in labels]


def oracle_labels(labels: Any) -> Any:
    """The oracle's labels for a spec's (one attribute's, in any form): the hashed form's buckets are
    the oracle's items ``{"range": d}`` (it estimates per bucket and knows no text); else :func:`labels_json`."""
    if isinstance(labels, HashedAnswers) or (isinstance(labels, dict) and "hashed" in labels):
        return {"range": int(labels.d if isinstance(labels, HashedAnswers) else labels["hashed"])}
    return labels_json(labels)


def bucket_names(labels: Any, candidates: Iterable[str]) -> dict[int, list[str]]:
    """Name a hashed form's buckets by candidate answers: each bucket that some candidate reaches,
    with every candidate that reaches it (a collision lists them all), in the candidates' order.

    Parameters
    ----------
    labels : HashedAnswers
        One attribute's labels (:attr:`pldp.deploy.Spec.labels`) in the hashed form.
    candidates : iterable of str
        The answers guessed, one per string (repeats counted once); each as a client would send it,
        normalised and hashed by :func:`text_bucket` (a blank one is skipped, an oversized one refused).

    Returns
    -------
    dict
        Bucket index to the candidates that land in it, ascending by bucket.

    Examples
    --------
    >>> names = bucket_names(HashedAnswers(4), ["café", "cafe\\u0301", "tea"])
    >>> sorted(len(v) for v in names.values())   # the two spellings of café share a bucket
    [1, 2]
    """
    if not isinstance(labels, HashedAnswers):
        raise ParameterError("bucket names are for answers in the hashed form (labels='hashed')")
    out: dict[int, list[str]] = {}
    for text in dict.fromkeys(candidates):
        if isinstance(text, str) and not text.strip(TRIMMED):
            continue
        out.setdefault(text_bucket(text, labels.d), []).append(text)
    return dict(sorted(out.items()))
