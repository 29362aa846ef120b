"""Real datasets bundled with pldp, and readers for the full original files.

Six datasets used in the papers' experiments are bundled, gzip-compressed, under
``pldp/datasets/data/``. ``MANIFEST.json`` holds the sha256 of each bundled file, and a
``SOURCE.md`` beside each one gives its origin, terms, and how it was extracted.

Single-item data (:class:`LabeledItems`, one value per user, PLDP-FEBSF):

* ``education``: UCI Adult ``education``, 16 values, the 32,561 rows of ``adult.data``.
* ``country``: UCI Adult ``native-country``, 42 values including ``"?"``, the 48,842 rows
  of ``adult.data`` and ``adult.test``.
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
"""

from __future__ import annotations

import bz2
import functools
import gzip
import importlib.resources
import io
import json
import lzma
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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


@dataclass(frozen=True)
class DatasetInfo:
    """One line of ``pldp datasets list``.

    ``records`` counts the records in the source: rows for single-item data, and item
    occurrences or rentals for item-set data, as the papers count them. ``pairs`` counts the
    distinct (user, item) pairs that the loader returns, after repeats within a user are
    dropped. ``kind`` is ``"single"`` for :class:`LabeledItems` and ``"itemset"`` for
    :class:`~pldp.itemsets.ItemSets`.
    """

    name: str
    users: int
    items: int
    records: int
    source: str
    pairs: int = 0
    kind: str = "itemset"
    note: str = ""


_INFO = (
    DatasetInfo(
        "education",
        32_561,
        16,
        32_561,
        "UCI Adult, adult.data, column education (Becker & Kohavi 1996)",
        32_561,
        "single",
        "PLDP-FEBSF 'Education'",
    ),
    DatasetInfo(
        "country",
        48_842,
        42,
        48_842,
        "UCI Adult, adult.data + adult.test, column native-country (Becker & Kohavi 1996)",
        48_842,
        "single",
        "PLDP-FEBSF 'Country'; 42 values incl. '?'",
    ),
    DatasetInfo(
        "job",
        45_211,
        12,
        45_211,
        "UCI Bank Marketing, bank-full.csv, column job (Moro et al. 2014)",
        45_211,
        "single",
        "PLDP-FEBSF 'Job'; 12 values incl. 'unknown' (the paper says 9)",
    ),
    DatasetInfo(
        "retail",
        88_162,
        16_470,
        908_576,
        "FIMI retail.dat (Brijs et al. 1999)",
        908_576,
        "itemset",
        "IDUE 'Retail'",
    ),
    DatasetInfo(
        "clothing",
        105_571,
        5_850,
        192_544,
        "Rent the Runway clothing fit (Misra et al., RecSys 2018)",
        192_278,
        "itemset",
        "IDUE 'Clothing'; 266 repeated (user, item) records dropped; the paper says 105,508 users",
    ),
    DatasetInfo(
        "kosarak",
        36_682,
        17_034,
        294_009,
        "FIMI kosarak.dat (Bodon), first 36,682 of 990,002 users",
        294_008,
        "itemset",
        "IPRR/IDUE 'Kosarak' on the bundled prefix; one repeated item dropped; the full file via load_kosarak(path)",
    ),
)

DATASET_NAMES: tuple[str, ...] = tuple(info.name for info in _INFO)
"""Names accepted by :func:`load_dataset`, in the order of :func:`list_datasets`."""

_ITEMSET_NAMES = ("retail", "clothing", "kosarak")

# Bundled files, relative to pldp/datasets/data (see MANIFEST.json).
_ADULT_FILE = "adult/adult_education_country.csv.gz"
_BANK_FILE = "bank_marketing/bank_job.csv.gz"
_RETAIL_FILE = "retail/retail.dat.gz"
_CLOTHING_FILE = "rent_the_runway/rtr_user_item.csv.gz"
_KOSARAK_FILE = "kosarak/kosarak_prefix.dat.gz"


# ----------------------------------------------------------------------------- reading


def _bundled(relpath: str) -> bytes:
    """The uncompressed content of a bundled ``.gz`` file."""
    resource = importlib.resources.files("pldp.datasets").joinpath("data", *relpath.split("/"))
    return gzip.decompress(resource.read_bytes())


def _decompress(raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:3] == b"BZh":
        return bz2.decompress(raw)
    if raw[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(raw)
    return raw


def _read_user_file(path: str | Path) -> bytes:
    p = Path(os.fspath(path)).expanduser()
    if not p.is_file():
        raise ParameterError(f"no such file: {str(p)!r}")
    return _decompress(p.read_bytes())


def _file_key(path: str | Path) -> tuple[str, int, int]:
    """Cache key of a user file: its resolved path, size and modification time."""
    p = Path(os.fspath(path)).expanduser().resolve()
    if not p.is_file():
        raise ParameterError(f"no such file: {str(p)!r}")
    st = p.stat()
    return str(p), st.st_size, st.st_mtime_ns


_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\r\n\v\f")] = True


def _parse_ints(data: bytes, separators: bytes = b"") -> tuple[np.ndarray, np.ndarray]:
    """Vectorised parser of non-negative decimal integers separated by whitespace.

    Returns the values (``int64``) and the 0-based line of each value. Any byte other than a
    digit, whitespace or one of ``separators`` raises :class:`ParameterError`.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    digit = (buf >= 48) & (buf <= 57)
    allowed = _SPACE.copy()
    allowed[list(separators)] = True
    bad = ~(digit | allowed[buf])
    if bad.any():
        pos = int(np.argmax(bad))
        line = int(np.count_nonzero(buf[:pos] == 10)) + 1
        raise ParameterError(
            f"expected non-negative integers separated by whitespace; found byte {bytes([buf[pos]])!r} on line {line}"
        )
    edges = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    if lengths.size and lengths.max() > 18:
        raise ParameterError("an integer in the file has more than 18 digits")
    values = np.zeros(starts.size, dtype=np.int64)
    longest = int(lengths.max()) if lengths.size else 0
    for k in range(longest):  # one pass per digit position, over all tokens at once
        m = lengths > k
        values[m] = values[m] * 10 + (buf[starts[m] + k] - 48)
    lines = np.searchsorted(np.flatnonzero(buf == 10), starts)
    return values, lines


def _first_appearance_ranks(ids: np.ndarray) -> np.ndarray:
    """Map ids to ``0..k-1`` in order of first appearance."""
    _, inverse = _dense_ranks(ids)
    first = np.full(int(inverse.max()) + 1, ids.size, dtype=np.int64)
    np.minimum.at(first, inverse, np.arange(ids.size))
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


@dataclass(frozen=True)
class _Parsed:
    sets: ItemSets
    labels: np.ndarray  # original item id of each index


def _dense_ranks(ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(sorted distinct ids, index of each id among them)``: like ``np.unique(ids,
    return_inverse=True)``, by counting when the ids are small non-negative integers."""
    top = int(ids.max()) if ids.size else 0
    if ids.size and int(ids.min()) >= 0 and top < max(4 * ids.size, 1 << 22):
        present = np.zeros(top + 1, dtype=bool)
        present[ids] = True
        rank = np.cumsum(present, dtype=np.int64) - 1
        return np.flatnonzero(present).astype(np.int64), rank[ids]
    labels, inverse = np.unique(ids, return_inverse=True)
    return labels.astype(np.int64), inverse.ravel().astype(np.int64)


def _first_of_repeats(users: np.ndarray, items: np.ndarray, n_users: int) -> np.ndarray:
    """Mask keeping the first record of each (user, item) pair (``items`` are ``0..d-1``)."""
    key = users * (int(items.max()) + 1) + items
    sorted_key = np.sort(key)
    repeated = sorted_key[1:][sorted_key[1:] == sorted_key[:-1]]
    keep = np.ones(key.size, dtype=bool)
    if repeated.size:  # rare: sort again only the records of users with a repeat
        flagged = np.zeros(n_users, dtype=bool)
        flagged[repeated // (int(items.max()) + 1)] = True
        pos = np.flatnonzero(flagged[users])
        order = np.argsort(key[pos], kind="stable")  # the first of equal pairs comes first
        sub = key[pos][order]
        keep[pos[order[1:][sub[1:] == sub[:-1]]]] = False
    return keep


def _build_itemsets(users: np.ndarray, items: np.ndarray, n_users: int) -> _Parsed:
    """Item-sets from (user, original item id) records in file order.

    ``users`` are ``0..n_users-1``. Records are grouped by user, keeping file order within a
    user, and a repeated (user, item) record is dropped. Items are re-indexed by ascending id.
    """
    if users.size and np.any(users[1:] < users[:-1]):
        order = np.argsort(users, kind="stable")
        users, items = users[order], items[order]
    labels, indices = _dense_ranks(items)
    if indices.size:
        keep = _first_of_repeats(users, indices, n_users)
        if not keep.all():
            users, indices = users[keep], indices[keep]
    indptr = np.zeros(n_users + 1, dtype=np.int64)
    np.cumsum(np.bincount(users, minlength=n_users), out=indptr[1:])
    sets = ItemSets(_readonly(indptr), _readonly(indices), max(int(labels.size), 1))
    return _Parsed(sets, _readonly(labels))


def _parse_dat(data: bytes) -> _Parsed:
    """FIMI ``.dat``: one user per non-blank line, items as whitespace-separated integers."""
    values, lines = _parse_ints(data)
    if values.size == 0:
        raise ParameterError("the file holds no items")
    users = np.zeros(values.size, dtype=np.int64)
    np.cumsum(lines[1:] != lines[:-1], out=users[1:])  # blank lines give no user
    return _build_itemsets(users, values, int(users[-1]) + 1)


def _pairs_from_user_ids(user_ids: np.ndarray, item_ids: np.ndarray) -> _Parsed:
    if user_ids.size == 0:
        raise ParameterError("the file holds no records")
    users = _first_appearance_ranks(user_ids)
    return _build_itemsets(users, item_ids, int(users.max()) + 1)


def _parse_user_item_csv(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The bundled ``user_id,item_id`` CSV (header, then two integers per line)."""
    header, _, body = data.partition(b"\n")
    if header.strip() != b"user_id,item_id":
        raise ParameterError(f"expected the header 'user_id,item_id', got {header[:80]!r}")
    values, lines = _parse_ints(body, separators=b",")
    if values.size % 2 or np.any(lines[0::2] != lines[1::2]):
        raise ParameterError("expected two integers per line")
    return values[0::2], values[1::2]


def _read_clothing_file(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """User and item ids of a Rent the Runway file: raw JSON lines, parquet or CSV."""
    name = Path(os.fspath(path)).name.lower()
    if ".parquet" in name:
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is an optional dependency
            raise ImportError("reading parquet needs pandas and pyarrow (pip install pldp[experiments])") from exc
        df = pd.read_parquet(Path(os.fspath(path)).expanduser(), columns=["user_id", "item_id"])
        return df["user_id"].to_numpy(np.int64), df["item_id"].to_numpy(np.int64)
    data = _read_user_file(path)
    first = data.lstrip()[:1]
    if first == b"{":  # renttherunway_final_data.json: one JSON record per line
        users, items = [], []
        for lineno, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                users.append(int(rec["user_id"]))
                items.append(int(rec["item_id"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise ParameterError(f"line {lineno}: not a record with integer user_id and item_id ({exc})") from None
        return np.asarray(users, dtype=np.int64), np.asarray(items, dtype=np.int64)
    header = data.partition(b"\n")[0].decode("utf-8", "replace").strip().split(",")
    cols = [c.strip().strip('"') for c in header]
    if "user_id" not in cols or "item_id" not in cols:
        raise ParameterError(f"a CSV needs columns user_id and item_id, got {cols}")
    if cols == ["user_id", "item_id"]:
        return _parse_user_item_csv(data)
    table = np.loadtxt(
        io.BytesIO(data),
        delimiter=",",
        skiprows=1,
        usecols=(cols.index("user_id"), cols.index("item_id")),
        dtype=np.int64,
        ndmin=2,
    )
    return table[:, 0].copy(), table[:, 1].copy()


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
    format: one user per line of whitespace-separated integer ids. Without ``path`` the
    environment variable ``PLDP_KOSARAK`` (set by ``pldp reproduce --kosarak PATH``) is used
    when it is set.
    """
    if path is None and os.environ.get("PLDP_KOSARAK"):
        path = os.environ["PLDP_KOSARAK"]
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


def list_datasets() -> list[DatasetInfo]:
    """The six bundled datasets with their counts (users, items, records, distinct pairs)."""
    return list(_INFO)
