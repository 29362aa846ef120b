"""Real datasets bundled with pldp, and readers for the full original files.

Six datasets used in the papers' experiments are bundled, gzip-compressed, under
``pldp/datasets/data/``. ``MANIFEST.json`` holds the sha256 of each bundled file, and a
``SOURCE.md`` beside each one gives its origin, terms, and how it was extracted.

Single-item data (:class:`LabeledItems`, one value per user, PLDP-FEBSF):

* ``education``: UCI Adult ``education``, 16 values, the 32,561 rows of ``adult.data``.
* ``country``: UCI Adult ``native-country``, 42 values including ``"?"``, the 48,842 rows
  of ``adult.data`` and ``adult.test``.
* ``education_country``: the pair of the two, ``"<education>|<country>"``, 484 values that occur,
  the 48,842 rows (:func:`load_adult_education_country`; Murakami & Kawamoto's census data
  stand-in, not in the catalog).
* ``job``: UCI Bank Marketing ``job``, 12 values including ``"unknown"``, 45,211 rows. The
  paper says 9 values; the released file has 12.

The labels of a single-item domain are sorted by code point (``sorted(labels)``), so
``"?"`` comes first in Country and ``"admin."`` first in Job.

Item-set data (:class:`~pldp.itemsets.ItemSets`, one set per user, IDUE and IPRR):

* ``retail``: FIMI ``retail.dat``. 88,162 users, 16,470 items, 908,576 records.
* ``clothing``: Rent the Runway, the items rented per user. 105,571 users, 5,850 items and
  192,544 records. 266 records repeat an earlier (user, item) pair and are dropped, which
  leaves 192,278 pairs.
* ``kosarak``: only the first 36,682 users of FIMI ``kosarak.dat`` are bundled. They have
  17,034 items and 294,009 records, or 294,008 distinct pairs: one line repeats an item.
  ``load_kosarak(path)`` reads the full 990,002-user file instead.

Conventions of the item-set loaders:

* Users come in file order. For ``.dat`` files one non-blank line is one user, and blank
  lines are skipped. For Rent the Runway users come in order of their first record.
* A user's items keep the order in which they first appear in the file, so
  :meth:`ItemSets.first_items` is the first item of each basket. A repeated item within a
  user is dropped.
* Items are re-indexed ``0 .. d-1`` in ascending order of their original integer id.
  :func:`item_labels` returns those original ids: index ``i`` is item ``item_labels(name)[i]``.
  For Retail, whose ids are exactly ``0 .. 16469``, the index equals the id.
* A ``path`` argument reads the original file format in place of the bundled copy. The file
  may be plain, gzip, bzip2 or xz (detected from its first bytes).

Loaded data is cached. The arrays returned are read-only: copy one before changing it.

The counts and sources of the bundled data are in :mod:`pldp.datasets.catalog`
(:func:`list_datasets`). The reading and parsing of the source files (``_sources``) and the
building of item-sets from their records (``_records``) are private modules of the package.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pldp.datasets._records import _pairs_from_user_ids, _Parsed, _readonly
from pldp.datasets._sources import (
    _bundled,
    _file_key,
    _parse_dat,
    _parse_user_item_csv,
    _read_clothing_file,
    _read_user_file,
)
from pldp.datasets.catalog import (
    _ADULT_FILE,
    _BANK_FILE,
    _CLOTHING_FILE,
    _ITEMSET_NAMES,
    _KOSARAK_FILE,
    _RETAIL_FILE,
    DATASET_NAMES,
    DatasetInfo,
    list_datasets,
)
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.itemsets import ItemSets

__all__ = [
    "DATASET_NAMES",
    "DatasetInfo",
    "LabeledItems",
    "item_labels",
    "list_datasets",
    "load_adult_country",
    "load_adult_education",
    "load_adult_education_country",
    "load_bank_job",
    "load_clothing",
    "load_dataset",
    "load_kosarak",
    "load_retail",
    "random_item_per_user",
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


# ----------------------------------------------------------------------------- single-item


def _labeled(name: str, values: np.ndarray) -> LabeledItems:
    labels, items = np.unique(values, return_inverse=True)
    return LabeledItems(name, _readonly(items.ravel().astype(np.int64)), Domain(labels.tolist()))


@functools.lru_cache(maxsize=1)
def _adult_columns() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    text = _bundled(_ADULT_FILE).decode("ascii")
    header, _, body = text.partition("\n")
    if header != "file,education,native_country":
        raise ParameterError(f"unexpected header in the bundled Adult file: {header!r}")
    cells = np.array(body.rstrip("\n").replace("\n", ",").split(","), dtype=str).reshape(-1, 3)
    return cells[:, 0], cells[:, 1], cells[:, 2]


@functools.lru_cache(maxsize=1)
def load_adult_education() -> LabeledItems:
    """Adult ``education`` over the 32,561 rows of ``adult.data`` (PLDP-FEBSF "Education").

    16 labels, sorted: ``"10th", "11th", ..., "Bachelors", ..., "HS-grad", ...``.

    >>> data = load_adult_education()
    >>> data.n, len(data.domain), data.domain.labels[data.items[0]]
    (32561, 16, 'Bachelors')
    """
    file, education, _ = _adult_columns()
    return _labeled("education", education[file == "data"])


@functools.lru_cache(maxsize=1)
def load_adult_country() -> LabeledItems:
    """Adult ``native-country`` over the 48,842 rows of ``adult.data`` and ``adult.test``
    (PLDP-FEBSF "Country"). 42 labels, sorted, ``"?"`` (missing) first."""
    _, _, country = _adult_columns()
    return _labeled("country", country)


@functools.lru_cache(maxsize=1)
def load_adult_education_country() -> LabeledItems:
    """Adult ``education`` and ``native-country`` as one item, ``"<education>|<country>"``, over the
    48,842 rows of ``adult.data`` and ``adult.test``: the 484 pairs that occur, sorted.

    >>> data = load_adult_education_country()
    >>> data.n, len(data.domain), data.domain.labels[data.items[0]]
    (48842, 484, 'Bachelors|United-States')
    """
    _, education, country = _adult_columns()
    return _labeled("education_country", np.char.add(np.char.add(education, "|"), country))


@functools.lru_cache(maxsize=1)
def load_bank_job() -> LabeledItems:
    """Bank Marketing ``job`` over the 45,211 rows of ``bank-full.csv`` (PLDP-FEBSF "Job").

    12 labels, sorted: ``"admin.", "blue-collar", ..., "unknown"``. The paper reports 9 values;
    the released data has 12, and they are used as they are.
    """
    text = _bundled(_BANK_FILE).decode("ascii")
    header, _, body = text.partition("\n")
    if header != "job":
        raise ParameterError(f"unexpected header in the bundled Bank file: {header!r}")
    return _labeled("job", np.array(body.rstrip("\n").split("\n"), dtype=str))


# ----------------------------------------------------------------------------- item-sets


@functools.lru_cache(maxsize=8)
def _load_itemsets(name: str, key: tuple[str, int, int] | None) -> _Parsed:
    if name == "clothing":
        users, items = _read_clothing_file(key[0]) if key else _parse_user_item_csv(_bundled(_CLOTHING_FILE))
        return _pairs_from_user_ids(users, items)
    bundled = {"retail": _RETAIL_FILE, "kosarak": _KOSARAK_FILE}[name]
    return _parse_dat(_read_user_file(key[0]) if key else _bundled(bundled))


def _itemsets(name: str, path: str | Path | None) -> _Parsed:
    if name not in _ITEMSET_NAMES:
        raise ParameterError(f"unknown item-set dataset {name!r}; choose from {list(_ITEMSET_NAMES)}")
    return _load_itemsets(name, None if path is None else _file_key(path))


def load_retail(path: str | Path | None = None) -> ItemSets:
    """FIMI Retail baskets: 88,162 users, 16,470 items, 908,576 records (no repeats).

    ``path``: a ``retail.dat`` file to read in place of the bundled copy, in the same
    format: one basket per line of whitespace-separated integer ids.
    """
    return _itemsets("retail", path).sets


def load_clothing(path: str | Path | None = None) -> ItemSets:
    """Rent the Runway items per user: 105,571 users, 5,850 items, 192,278 distinct pairs.

    The source has 192,544 records. The 266 that repeat an earlier (user, item) pair are
    dropped. Users come in order of their first record.

    ``path``: the raw ``renttherunway_final_data.json`` (JSON lines, optionally
    compressed), a parquet file (needs pandas and pyarrow) or a CSV with ``user_id`` and
    ``item_id`` columns.
    """
    return _itemsets("clothing", path).sets


def load_kosarak(path: str | Path | None = None) -> ItemSets:
    """Kosarak click-stream. Without ``path``: the bundled first 36,682 users, with 17,034 items,
    294,009 records and 294,008 distinct pairs.

    ``path``: the full FIMI ``kosarak.dat`` (990,002 users, 41,270 items), or any file in its
    format: one user per line of whitespace-separated integer ids. (``pldp reproduce
    --kosarak PATH`` passes its file to the experiments, which call ``load_kosarak(PATH)``.)
    """
    return _itemsets("kosarak", path).sets


def item_labels(name: str, path: str | Path | None = None) -> np.ndarray:
    """Original item ids of an item-set dataset: index ``i`` of ``load_<name>(path)`` is
    ``item_labels(name, path)[i]``. The ids are ascending, and the array is read-only.

    >>> item_labels("kosarak")[:5].tolist()
    [1, 2, 3, 4, 5]
    """
    return _itemsets(name, path).labels


def load_dataset(name: str, path: str | Path | None = None) -> LabeledItems | ItemSets:
    """Any dataset of :func:`list_datasets` by name. ``path`` is accepted only for item-set data."""
    single = {"education": load_adult_education, "country": load_adult_country, "job": load_bank_job}
    if name in single:
        if path is not None:
            raise ParameterError(f"dataset {name!r} is bundled only; it takes no path")
        return single[name]()
    if name in _ITEMSET_NAMES:
        return _itemsets(name, path).sets
    raise ParameterError(f"unknown dataset {name!r}; choose from {list(DATASET_NAMES)}")


def random_item_per_user(sets: ItemSets, rng: np.random.Generator) -> np.ndarray:
    """One uniformly random item of each non-empty set (IPRR's Kosarak single-item data).

    Users with empty sets are dropped, as in :meth:`ItemSets.first_items`. One vectorised draw.

    >>> sets = ItemSets.from_lists([[0, 2], [], [1]], 3)
    >>> random_item_per_user(sets, np.random.default_rng(0)).shape
    (2,)
    """
    if not isinstance(sets, ItemSets):
        raise ParameterError(f"sets must be an ItemSets, got {type(sets).__name__}")
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy Generator, got {type(rng).__name__}")
    sizes = sets.sizes
    nonempty = sizes > 0
    offsets = rng.integers(0, sizes[nonempty]) if nonempty.any() else np.zeros(0, dtype=np.int64)
    return sets.indices[sets.indptr[:-1][nonempty] + offsets]
