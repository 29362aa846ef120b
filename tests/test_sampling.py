"""The integer-grid samplers of :mod:`pldp.channel.sampling`: the word-to-output map is exactly the one
``docs/wire-format.md`` states, whatever shortcut finds it."""

from __future__ import annotations

import numpy as np
import pytest

import pldp
from pldp.channel.sampling import GRID, GUIDE_BITS, direct_draw, direct_table


def _by_definition(x: np.ndarray, words: np.ndarray, keep: int, weights: np.ndarray) -> np.ndarray:
    """``w < keep``: ``x``; otherwise the smallest ``y`` with ``w - keep < W_0 + ... + W_y`` (a plain search)."""
    cum = np.cumsum(np.asarray(weights, dtype=np.int64))
    y = np.searchsorted(cum, words.astype(np.int64) - keep, side="right")
    return np.where(words.astype(np.int64) < keep, x, y)


def _edge_words(keep: int, weights: np.ndarray) -> np.ndarray:
    """Every bound, one word either side of it, both ends of the word range and of every bucket."""
    bounds = keep + np.concatenate([[0], np.cumsum(np.asarray(weights, dtype=np.int64))])
    width = 1 << (32 - GUIDE_BITS)
    buckets = np.arange(1 << GUIDE_BITS, dtype=np.int64) * width
    words = np.concatenate([bounds - 1, bounds, bounds + 1, buckets, buckets + width - 1, [0, GRID - 1]])
    return np.unique(words[(words >= 0) & (words < GRID)]).astype(np.uint32)


def _tables() -> dict[str, tuple[int, np.ndarray]]:
    """Equal weights, uneven ones, zeros (non-sensitive items), and crowded buckets (tiny weights)."""
    counts = pldp.datasets.zipf_counts(10**5, 100, np.random.default_rng(1))
    mechs = {
        "krr": pldp.KRR(1.0, 7),
        "iprr-fig1": pldp.IPRR(pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])),
        "iprr-by-frequency": pldp.IPRR(pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5)),
        "iprr-capped": pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 30.0, 40.0, 50.0, 1.0, np.inf])),
    }
    out = {name: (m.keep_threshold, m.weights) for name, m in mechs.items()}
    out["hand"] = (3, np.array([0, 1, 0, 2**31, 1, 1, GRID - 3 - 2**31 - 3, 0]))
    return out


@pytest.mark.parametrize("name", list(_tables()))
def test_direct_draw_is_the_definition_at_every_edge_and_at_random(name: str) -> None:
    keep, weights = _tables()[name]
    assert keep + int(np.sum(weights)) == GRID
    table = direct_table(keep, weights)
    rng = np.random.default_rng(5)
    words = np.concatenate(
        [_edge_words(keep, weights), rng.integers(0, GRID, 200_000, dtype=np.uint64).astype(np.uint32)]
    )
    x = rng.integers(0, len(weights), words.size)
    np.testing.assert_array_equal(direct_draw(x, words, table), _by_definition(x, words, keep, weights))
    if name == "iprr-by-frequency":  # the shortcut for crowded buckets ran
        assert table.crowded.size and table.crowded.any()
    if name == "krr":
        assert table.uniform == int(weights[0])


def test_the_guide_table_is_a_search_that_only_starts_earlier() -> None:
    """The guide of each bucket is the number of bounds at or below its first word."""
    keep, weights = _tables()["iprr-by-frequency"]
    table = direct_table(keep, weights)
    starts = np.arange(1 << GUIDE_BITS, dtype=np.int64) << (32 - GUIDE_BITS)
    np.testing.assert_array_equal(table.guide, [np.count_nonzero(table.bounds <= s) for s in starts])
