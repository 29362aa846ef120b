"""Real datasets bundled with pldp (loaders). CONTRACT STUB: being implemented."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pldp.domain import Domain
from pldp.protocols.itemset import ItemSets

__all__ = [
    "LabeledItems",
    "DatasetInfo",
    "load_adult_education",
    "load_adult_country",
    "load_bank_job",
    "load_retail",
    "load_clothing",
    "load_kosarak",
    "random_item_per_user",
    "list_datasets",
]


@dataclass(frozen=True)
class LabeledItems:
    """Single-item data: one item index per user, with the labels."""

    name: str
    items: np.ndarray
    domain: Domain

    @property
    def n(self) -> int:
        return int(self.items.size)

    def counts(self) -> np.ndarray:
        return np.bincount(self.items, minlength=len(self.domain))


@dataclass(frozen=True)
class DatasetInfo:
    """One line of ``pldp datasets list``."""

    name: str
    users: int
    items: int
    records: int
    source: str


def load_adult_education() -> LabeledItems:  # Adult "education": 16 values, 32,561 rows of adult.data
    raise NotImplementedError


def load_adult_country() -> LabeledItems:  # Adult "native-country": 42 values incl. "?", 48,842 rows (data+test)
    raise NotImplementedError


def load_bank_job() -> LabeledItems:  # Bank Marketing "job": 12 values, 45,211 rows
    raise NotImplementedError


def load_retail(path: str | Path | None = None) -> ItemSets:  # 88,162 users, 16,470 items
    raise NotImplementedError


def load_clothing(path: str | Path | None = None) -> ItemSets:  # Rent the Runway: 105,571 users, 5,850 items
    raise NotImplementedError


def load_kosarak(path: str | Path | None = None) -> ItemSets:  # prefix: 36,682 users; full file from path
    raise NotImplementedError


def random_item_per_user(sets: ItemSets, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random item of each non-empty set (IPRR's Kosarak single-item data)."""
    raise NotImplementedError


def list_datasets() -> list[DatasetInfo]:
    raise NotImplementedError
