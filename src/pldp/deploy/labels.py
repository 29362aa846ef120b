"""A spec's answer labels in either of their two forms (``docs/wire-format.md`` §1).

A spec's ``labels`` (one entry per attribute for MPLDP) is either the list of its answers' strings,
in index order, or ``{"range": d}``: the answers are the integers ``0 .. d-1``, each labelled by its
decimal string. The range form keeps a spec over 10^6 items a few kilobytes; it is opt-in
(``Spec.from_mechanism(..., labels="range")``). Here both forms are read alike:
:func:`check_labels` checks one, :func:`answer_labels` gives its answers as a ``Sequence[str]``
(the list itself, or an :class:`AnswerRange` that makes no d strings), :func:`label_index` maps an
answer's label to its index, and :func:`labels_json` gives back the JSON form.

Examples
--------
>>> labels = answer_labels({"range": 1000})
>>> len(labels), labels[7], labels.index("999"), "0999" in labels
(1000, '7', 999, False)
>>> label_index(labels)["12"]
12
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from pldp.errors import SpecError

__all__ = ["AnswerRange", "answer_labels", "check_labels", "label_index", "labels_json"]

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
        return isinstance(other, AnswerRange) and other.d == self.d

    def __hash__(self) -> int:
        return hash(("range", self.d))

    def __repr__(self) -> str:
        return f"AnswerRange({self.d})"


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


def check_labels(value: Any, path: str) -> int:
    """The number of answers of a spec's labels (one attribute's): a list of at least 2 distinct
    strings, or ``{"range": d}`` with d an integer of at least 2; :class:`~pldp.errors.SpecError`
    naming ``path`` otherwise (any other object: other members, a boolean, a float, below 2)."""
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
    or an :class:`AnswerRange` for ``{"range": d}``."""
    return AnswerRange(int(value["range"])) if isinstance(value, dict) else list(value)


def label_index(labels: Sequence[Any]) -> Mapping[Any, int]:
    """Each label's index (a dict; for an :class:`AnswerRange`, a mapping that parses the label)."""
    if isinstance(labels, AnswerRange):
        return _RangeIndex(labels)
    return {lab: i for i, lab in enumerate(labels)}


def labels_json(labels: Any) -> Any:
    """The JSON form of labels (one attribute's, or a list of several): ``{"range": d}`` for an
    :class:`AnswerRange` (or a range form, copied), else the list."""
    if isinstance(labels, AnswerRange):
        return {"range": labels.d}
    if isinstance(labels, dict):
        return dict(labels)
    return [labels_json(lab) if isinstance(lab, (AnswerRange, dict, list)) else lab for lab in labels]
