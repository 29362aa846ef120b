"""Canonical parameters: the whole-list and whole-array conversions of :func:`pldp.fingerprint.canonical`
give exactly what the element-by-element rule gives, and :func:`pldp.fingerprint.canonical_json`'s
arrays written once per content give the text ``json.dumps`` gives, so no fingerprint changes with them."""

from __future__ import annotations

import json
import math
from typing import Any

import numpy as np
import pytest

from pldp import fingerprint as fp
from pldp.fingerprint import canonical, canonical_json, canonical_labels


def _by_element(value: Any) -> Any:
    """The rule, one element at a time (the definition before the whole-list conversions)."""
    if isinstance(value, dict):
        return {str(k): _by_element(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_by_element(v) for v in value]
    if isinstance(value, np.ndarray):
        return _by_element(value.tolist())
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        v = float(value)
        if math.isnan(v):
            raise ValueError("NaN has no canonical form")
        return v if math.isfinite(v) else ("inf" if v > 0 else "-inf")
    return value


def _same(a: Any, b: Any) -> bool:
    """Equal as JSON text and as Python types (``True`` is not ``1`` here)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) and _types(a) == _types(b)


def _types(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _types(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_types(v) for v in value]
    return type(value).__name__


rng = np.random.default_rng(20261129)
VALUES = [
    [1, 2, 3],
    ["a", "b", "ç"],
    [1.5, -0.0, 2.25],
    [1.5, math.inf, -math.inf],
    [True, 1, False],
    [1, 2.0, "x", None, (3, 4)],
    (1, 2),
    [np.int64(3), np.float64(0.5), np.bool_(True)],
    rng.integers(0, 2**40, size=(4, 5)),
    rng.random(7),
    np.array([0.5, np.inf, -np.inf]),
    np.array([True, False]),
    np.arange(6, dtype=np.uint8).reshape(2, 3),
    np.array([1.0, 2.0], dtype=np.float32),
    {"a": [1, 2], 3: rng.random((2, 2)), "b": [[1, 2], [3.5, math.inf]]},
    [],
    np.zeros((0, 3)),
]


@pytest.mark.parametrize("index", range(len(VALUES)))
def test_whole_conversions_are_the_element_rule(index: int) -> None:
    value = VALUES[index]
    assert _same(canonical(value), _by_element(value))


@pytest.mark.parametrize("value", [[1.0, math.nan], np.array([0.5, np.nan]), {"x": (math.nan,)}])
def test_nan_is_refused_whole_or_element_by_element(value: Any) -> None:
    with pytest.raises(ValueError, match="NaN"):
        canonical(value)


def test_labels_of_strings_are_kept_and_others_converted() -> None:
    assert canonical_labels(["x", "y"]) == ["x", "y"]
    assert canonical_labels(range(3)) == {"range": 3}
    assert canonical_labels(["x", 1, object]) == ["x", 1, {"repr": repr(object)}]


def _dumped(params: dict[str, Any]) -> str:
    return json.dumps(canonical(params), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def test_arrays_written_once_per_content_give_the_text_of_the_whole() -> None:
    """Large arrays (ints, floats, bools, 2-d, strided, infinite entries, in lists and nested
    dicts) and small ones: the same text as ``json.dumps`` of :func:`canonical`, written afresh
    and again from the kept texts; arrays of the same bytes but another dtype or shape differ."""
    big = rng.random(fp._LARGE * 3)
    params = {
        "z": big,
        "a": [rng.integers(0, 2**40, size=(fp._LARGE, 2)), {"x": big.reshape(3, -1), "y": rng.random(5)}],
        "m": rng.random(fp._LARGE * 2) > 0.5,
        "s": rng.random((4, fp._LARGE))[:, ::2],
        "t": big.astype(np.float32),
        "u": np.where(np.arange(fp._LARGE) % 3 == 0, np.inf, big[: fp._LARGE]),
        "v": "a string",
    }
    want = _dumped(params)
    fp._written.clear()
    assert canonical_json(params) == want  # written afresh
    assert len(fp._written) == 6  # big (1-d and 2-d), the ints, bools, strided slice, float32; not "u" (inf)
    assert canonical_json(params) == want  # from the kept texts
    same_bytes = {"z": big.view(np.int64), "a": big.reshape(3, -1)}
    assert canonical_json(same_bytes) == _dumped(same_bytes) != canonical_json({"z": big, "a": big.reshape(3, -1)})


def test_the_kept_texts_are_bounded() -> None:
    fp._written.clear()
    for i in range(fp._KEPT + 5):
        assert canonical_json({"a": np.full(fp._LARGE, i)}) == _dumped({"a": np.full(fp._LARGE, i)})
    assert len(fp._written) == fp._KEPT
