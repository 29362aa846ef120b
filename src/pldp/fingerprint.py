"""Fingerprints: a stable identifier of the exact mechanism or protocol that made a tally.

A tally is only meaningful with the parameters of the randomizer that produced its reports:
``KRR(1.0, 5)``'s counts estimated as if they came from ``KRR(2.0, 5)`` give a silently wrong
answer. Every mechanism and protocol therefore describes itself by its *canonical parameters*
(:meth:`pldp.FrequencyOracle.params`: a JSON-able dict of everything a client needs, e.g. the
labels, the budgets, the integer coin thresholds of unary encodings) and every tally it makes
carries the fingerprint of that description. ``estimate``, ``merge`` and ``from_dict`` refuse a
tally whose fingerprint differs.

The fingerprint is the first 32 hex digits (128 bits) of the SHA-256 of the canonical JSON
text: keys sorted, no white space, floats written with Python's shortest round-trip ``repr``
(exact and the same on every platform), infinities as the string ``"inf"``. It depends only on
the parameters, never on ``repr``, object identity or the process, so it is stable across
processes, machines and pldp versions that keep the same parameters.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np

__all__ = ["FINGERPRINT_LENGTH", "canonical", "canonical_json", "canonical_labels", "fingerprint", "is_fingerprint"]

#: Hex digits of a fingerprint.
FINGERPRINT_LENGTH = 32
_FINGERPRINT = re.compile(f"[0-9a-f]{{{FINGERPRINT_LENGTH}}}")


#: Element types a list keeps as they are (``bool`` is not ``int`` here: ``type(True) is bool``).
_PLAIN = frozenset({str, int})


def canonical(value: Any) -> Any:
    """``value`` as plain JSON types: numpy scalars and arrays to Python, tuples to lists,
    non-finite floats to ``"inf"`` / ``"-inf"`` (NaN is refused: it has no canonical form).

    A large domain's parameters hold lists and arrays of many thousands of entries (labels,
    thresholds), so lists of strings and integers, and arrays of numbers, are converted whole;
    the result is the one the element-by-element rule gives (``tests/test_fingerprint.py``).
    """
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        kinds = set(map(type, value))
        if kinds <= _PLAIN or (kinds == {float} and all(map(math.isfinite, value))):
            return list(value)
        return [canonical(v) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            return value.tolist()  # Python bools, ints or finite floats, nested as the array is
        return canonical(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            raise ValueError("NaN has no canonical form")
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    if value is None or isinstance(value, str):
        return value
    raise TypeError(f"no canonical form for {type(value).__name__}: {value!r}")


def canonical_labels(labels: Sequence[Hashable]) -> Any:
    """Domain labels in canonical form: ``{"range": d}`` for ``0..d-1``, else the list of labels.

    Labels that are not strings, numbers, booleans, ``None`` or tuples of those are written as
    ``{"repr": repr(label)}``.
    """
    kinds = set(map(type, labels))
    if kinds <= {int} and tuple(labels) == tuple(range(len(labels))):
        return {"range": len(labels)}
    if kinds <= _PLAIN:  # strings and integers are their own canonical form: converted whole
        return list(labels)
    out = []
    for lab in labels:
        try:
            out.append(canonical(lab))
        except (TypeError, ValueError):
            out.append({"repr": repr(lab)})
    return out


def canonical_json(params: dict[str, Any]) -> str:
    """The canonical JSON text of a parameter dict (see the module docstring)."""
    return json.dumps(canonical(params), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def fingerprint(params: dict[str, Any]) -> str:
    """The fingerprint of a parameter dict: 32 hex digits of the SHA-256 of :func:`canonical_json`.

    Examples
    --------
    >>> fingerprint({"mechanism": "KRR", "epsilon": 1.0}) == fingerprint({"epsilon": 1.0, "mechanism": "KRR"})
    True
    >>> fingerprint({"epsilon": 1.0}) == fingerprint({"epsilon": 2.0})
    False
    """
    return hashlib.sha256(canonical_json(params).encode("utf-8")).hexdigest()[:FINGERPRINT_LENGTH]


def is_fingerprint(value: Any) -> bool:
    """Whether ``value`` has the form of a fingerprint (32 lower-case hex digits)."""
    return isinstance(value, str) and _FINGERPRINT.fullmatch(value) is not None
