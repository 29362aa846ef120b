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
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
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
    return _canonical(value, None)


def _canonical(value: Any, stand_in: Callable[[np.ndarray], str] | None) -> Any:
    """:func:`canonical`; with ``stand_in``, a large array of numbers (its canonical form a list of
    Python numbers) becomes the string ``stand_in`` returns for it (see :func:`canonical_json`)."""
    if isinstance(value, dict):
        return {str(k): _canonical(v, stand_in) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        kinds = set(map(type, value))
        if kinds <= _PLAIN or (kinds == {float} and all(map(math.isfinite, value))):
            return list(value)
        return [_canonical(v, stand_in) for v in value]
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "biu" or (value.dtype.kind == "f" and np.isfinite(value).all()):
            if stand_in is not None and value.size >= _LARGE:
                return stand_in(value)
            return value.tolist()  # Python bools, ints or finite floats, nested as the array is
        return _canonical(value.tolist(), stand_in)
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
    """The canonical JSON text of a parameter dict (see the module docstring).

    Writing a large array's numbers is most of the work (some 20 ms for the three arrays of an
    IDUE over 17,000 items), and the same arrays recur: an oracle and the protocols built on it,
    the padding lengths of one base. So each array of at least ``_LARGE`` numbers is written once
    per content (its bytes' hash, dtype and shape) and kept among the last ``_KEPT`` written; in
    the text of the whole it stands in as a string no parameter holds (this process's random
    marker and a serial number), replaced by the array's text at the end. The text is the one
    ``json.dumps`` of :func:`canonical` gives (``tests/test_fingerprint.py``).
    """
    arrays: list[str] = []

    def stand_in(array: np.ndarray) -> str:
        arrays.append(_array_text(array))
        return f"{_MARKER}{len(arrays) - 1}"

    text = json.dumps(_canonical(params, stand_in), **_JSON)
    for i, array_text in enumerate(arrays):  # each marker is one JSON string: '"' marker i '"'
        text = text.replace(f'"{_MARKER}{i}"', array_text, 1)
    return text


#: Arrays of at least this many numbers are written once per content by :func:`canonical_json`.
_LARGE = 256
#: How many written arrays :func:`canonical_json` keeps.
_KEPT = 32
_JSON: dict[str, Any] = {"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False, "allow_nan": False}
#: What stands in for an array in :func:`canonical_json`'s text: random, so no parameter holds it.
_MARKER = f"pldp-array-{secrets.token_hex(16)}-"
_written: OrderedDict[tuple[str, tuple[int, ...], bytes], str] = OrderedDict()
_written_lock = threading.Lock()


def _array_text(array: np.ndarray) -> str:
    """The JSON text of a numeric array's canonical form (a nested list), from the last ``_KEPT``."""
    key = (array.dtype.str, array.shape, hashlib.blake2b(np.ascontiguousarray(array).data, digest_size=16).digest())
    with _written_lock:
        text = _written.get(key)
        if text is not None:
            _written.move_to_end(key)
            return text
    text = json.dumps(array.tolist(), **_JSON)
    with _written_lock:
        _written[key] = text
        if len(_written) > _KEPT:
            _written.popitem(last=False)
    return text


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
