"""Datasets: the papers' synthetic generators and the bundled real data.

Real data (:mod:`pldp.datasets.real`) is three single-item sets, Adult Education, Adult
Country and Bank Job, and three item-set collections, Retail, Rent the Runway Clothing and a
Kosarak prefix. All are bundled gzip-compressed with provenance notes. Call
:func:`list_datasets` for their counts.
"""

from pldp.datasets.real import (
    DATASET_NAMES,
    DatasetInfo,
    LabeledItems,
    item_labels,
    list_datasets,
    load_adult_country,
    load_adult_education,
    load_bank_job,
    load_clothing,
    load_dataset,
    load_kosarak,
    load_retail,
    random_item_per_user,
)
from pldp.datasets.synthetic import (
    mpldp_dataset,
    power_law_items,
    uniform_items,
    zipf_counts,
    zipf_items,
    zipf_probabilities,
)

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
    "mpldp_dataset",
    "power_law_items",
    "random_item_per_user",
    "uniform_items",
    "zipf_counts",
    "zipf_items",
    "zipf_probabilities",
]
