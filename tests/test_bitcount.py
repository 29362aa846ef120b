"""The bit-counting kernels against ``np.unpackbits``: per row, per group, and the unary tallies'
histogram of ones and tail counts (which an attacker can fill with every report)."""

from __future__ import annotations

import numpy as np
import pytest

from pldp import bitcount
from pldp.bitcount import group_bit_counts, row_ones
from pldp.tally import unary_report_stats
from tests.tolerances import SUM_RTOL


@pytest.mark.parametrize(("n", "width"), [(0, 3), (1, 1), (777, 1), (1000, 13), (513, 125), (10, 2)])
def test_row_ones_and_group_counts_match_unpackbits(n: int, width: int) -> None:
    rng = np.random.default_rng(width * 1000 + n)
    rows = rng.integers(0, 256, (n, width), dtype=np.uint8)
    bits = np.unpackbits(rows, axis=1).astype(np.int64)
    np.testing.assert_array_equal(row_ones(rows), bits.sum(axis=1))
    group = rng.integers(0, 4, n)
    expected = np.zeros((4, 8 * width), dtype=np.int64)
    np.add.at(expected, group, bits)
    np.testing.assert_array_equal(group_bit_counts(rows, group, 4), expected)
    weights = rng.random(n)
    weighted = np.zeros((4, 8 * width))
    np.add.at(weighted, group, bits * weights[:, None])
    # the same weighted sums in another order: rounding only (measured 6 eps)
    np.testing.assert_allclose(group_bit_counts(rows, group, 4, weights), weighted, rtol=SUM_RTOL, atol=1e-12)


def test_row_ones_without_numpy_bitwise_count(monkeypatch: pytest.MonkeyPatch) -> None:
    rows = np.random.default_rng(3).integers(0, 256, (300, 7), dtype=np.uint8)
    monkeypatch.setattr(bitcount, "_BITWISE_COUNT", None)  # numpy < 2: the 16-bit table
    np.testing.assert_array_equal(row_ones(rows), np.unpackbits(rows, axis=1).sum(axis=1))


@pytest.mark.parametrize("every", [1, 3])
def test_unary_report_stats_match_unpackbits(every: int) -> None:
    rng = np.random.default_rng(every)
    nbits = 100
    rows = rng.integers(0, 256, (5000, 13), dtype=np.uint8)
    rows[:, -1] &= np.uint8(0xF0)  # no padding bit set
    region = np.zeros(nbits + 1, dtype=bool)
    region[::every] = True  # every = 1: every report is in the tail, as an attacker can make them
    hist, tails = unary_report_stats(rows, nbits, region)
    bits = np.unpackbits(rows, axis=1, count=nbits).astype(np.int64)
    ones = bits.sum(axis=1)
    np.testing.assert_array_equal(hist, np.bincount(ones, minlength=nbits + 1))
    expected = {int(s): bits[ones == s].sum(axis=0) for s in np.unique(ones) if region[s]}
    assert sorted(tails) == sorted(expected) and len(tails) > 5
    for s, counts in expected.items():
        np.testing.assert_array_equal(tails[s], counts)
