"""Shared fixtures and helpers for the pldp tests."""

from __future__ import annotations

import numpy as np
import pytest

import pldp


@pytest.fixture
def rng() -> np.random.Generator:
    return np.random.default_rng(20261122)


def fig1_budgets() -> pldp.ItemBudgets:
    """Li et al. Fig. 1: D_S = {x1, x2, x3} with E = {0.1, 0.5, 1.0}, D_N = {x4, x5}."""
    return pldp.ItemBudgets.from_array([0.1, 0.5, 1.0, np.inf, np.inf])


def zipf_iprr(d: int = 20, n: int = 10_000, seed: int = 7) -> tuple[pldp.IPRR, np.ndarray]:
    """IPRR with the paper's by-frequency budgets (0.1..10, LC=4, NR=0.5) on Zipf counts."""
    counts = pldp.datasets.zipf_counts(n, d, np.random.default_rng(seed))
    budgets = pldp.ItemBudgets.by_frequency(counts, 0.1, 10.0, 4, 0.5)
    return pldp.IPRR(budgets), counts
