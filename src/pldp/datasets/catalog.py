"""The catalogue of the bundled real datasets: names, counts, sources and bundled files.

Each bundled file lives under ``pldp/datasets/data/`` with a ``SOURCE.md`` beside it (origin,
terms, extraction); ``MANIFEST.json`` there holds the sha256 of every bundled file. The loaders
are in :mod:`pldp.datasets.real`.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DATASET_NAMES", "DatasetInfo", "list_datasets"]


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
"""Names accepted by :func:`~pldp.datasets.real.load_dataset`, in the order of :func:`list_datasets`."""

_ITEMSET_NAMES = ("retail", "clothing", "kosarak")

# Bundled files, relative to pldp/datasets/data (see MANIFEST.json).
_ADULT_FILE = "adult/adult_education_country.csv.gz"
_BANK_FILE = "bank_marketing/bank_job.csv.gz"
_RETAIL_FILE = "retail/retail.dat.gz"
_CLOTHING_FILE = "rent_the_runway/rtr_user_item.csv.gz"
_KOSARAK_FILE = "kosarak/kosarak_prefix.dat.gz"


def list_datasets() -> list[DatasetInfo]:
    """The six bundled datasets with their counts (users, items, records, distinct pairs)."""
    return list(_INFO)
