"""Validation helpers shared by every public constructor (internal)."""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.errors import DomainError, ParameterError, PLDPError, TallyError


def _show(values: Sequence[Any] | np.ndarray, limit: int = 5) -> str:
    """Short printable list of offending values."""
    items = values.tolist() if isinstance(values, np.ndarray) else list(values)  # plain Python scalars
    shown = ", ".join(repr(v) for v in items[:limit])
    more = len(items) - limit
    return shown + (f", ... ({more} more)" if more > 0 else "")


def check_epsilon(epsilon: Any, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float, requiring a finite positive number."""
    if isinstance(epsilon, (bool, np.bool_)) or not isinstance(epsilon, numbers.Real):
        raise ParameterError(f"{name} must be a real number, got {epsilon!r}")
    value = float(epsilon)
    if not math.isfinite(value) or value <= 0.0:
        raise ParameterError(f"{name} must be finite and > 0, got {epsilon!r}")
    return value


def check_int(value: Any, name: str, minimum: int) -> int:
    """Return ``value`` as an int >= ``minimum`` (bools and non-integral floats refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        if isinstance(value, (float, np.floating)) and float(value).is_integer():
            value = int(value)
        else:
            raise ParameterError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ParameterError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def check_probability(value: Any, name: str, *, open_low: bool = False) -> float:
    """Return ``value`` as a float in [0, 1] (or (0, 1] with ``open_low``)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{name} must be a number in [0, 1], got {value!r}") from None
    if not (0.0 <= v <= 1.0) or (open_low and v == 0.0):
        interval = "(0, 1]" if open_low else "[0, 1]"
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}")
    return v


def as_counts(counts: Any, name: str = "counts", length: int | None = None) -> np.ndarray:
    """Return ``counts`` as a 1-D int64 array of non-negative integers.

    Floats are accepted only when every entry is integral; NaN, inf, negative and
    fractional entries raise :class:`~pldp.errors.TallyError` naming the first offenders.
    """
    arr = np.asarray(counts)
    if arr.dtype == np.int64 and arr.ndim == 1 and (length is None or arr.shape[0] == length):
        if not arr.size or arr.min() >= 0:  # the common case, checked by one reduction
            return arr
    if arr.ndim != 1:
        raise TallyError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise TallyError(f"{name} has length {arr.shape[0]}, expected {length}")
    if arr.dtype.kind == "b" or arr.dtype.kind not in "iuf":
        raise TallyError(f"{name} must hold integers, got dtype {arr.dtype}")
    if arr.dtype.kind == "f":
        bad = ~np.isfinite(arr) | (arr != np.round(arr))
        if bad.any():
            raise TallyError(
                f"{name} must hold whole numbers; bad entries at {_show(np.flatnonzero(bad))}: {_show(arr[bad])}"
            )
    neg = arr < 0
    if neg.any():
        raise TallyError(
            f"{name} must be non-negative; negative entries at {_show(np.flatnonzero(neg))}: {_show(arr[neg])}"
        )
    if arr.dtype.kind in "uf":
        big = arr > np.iinfo(np.int64).max
        if big.any():
            raise TallyError(f"{name} exceed the int64 range at entries {_show(np.flatnonzero(big))}")
    return arr.astype(np.int64, copy=False)


def as_frequencies(p: Any, length: int, name: str = "p") -> np.ndarray:
    """Return ``p`` as a probability vector of the given length (sums to 1 within 1e-9)."""
    arr = np.asarray(p, dtype=float)
    if arr.ndim != 1 or arr.shape[0] != length:
        raise ParameterError(f"{name} must be a vector of length {length}, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ParameterError(f"{name} must be finite and non-negative")
    total = arr.sum()
    if abs(total - 1.0) > 1e-9:
        raise ParameterError(f"{name} must sum to 1, sums to {total!r}")
    return arr


def as_indices(x: Any, what: str, error: type[PLDPError] = DomainError) -> np.ndarray:
    """``x`` as a 1-D array of integer item indices, one per user (the range is the caller's to check).

    A 2-D array raises ``error`` (a batch of reports is one row per user, never flattened); a
    non-integer dtype raises :class:`~pldp.errors.DomainError`.
    """
    arr = np.asarray(x)
    if arr.ndim != 1:
        raise error(f"{what} must be a 1-D array (one entry per user), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0:
            return arr.astype(np.int64)
        raise DomainError(f"{what} must be integer item indices (use Domain.encode), got dtype {arr.dtype}")
    return arr


def check_index_range(arr: np.ndarray, d: int, what: str, error: type[PLDPError] = DomainError) -> None:
    """Raise ``error`` (:class:`~pldp.errors.DomainError`) naming the entries of ``arr`` outside ``[0, d)``."""
    if arr.size and (arr.min() < 0 or arr.max() >= d):
        bad = arr[(arr < 0) | (arr >= d)]
        raise error(f"{what} must lie in [0, {d}); out of domain: {_show(np.unique(bad))}")
