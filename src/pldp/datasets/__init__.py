"""Datasets: the papers' synthetic generators and the bundled real data.

Real data (:mod:`pldp.datasets.real`) is three single-item sets, Adult Education, Adult
Country and Bank Job, and three item-set collections, Retail, Rent the Runway Clothing and a
Kosarak prefix. All are bundled gzip-compressed with provenance notes. Call
:func:`list_datasets` for their counts.
"""

from pldp.datasets import real, synthetic
from pldp.datasets.real import *  # noqa: F403 - the names of real.__all__
from pldp.datasets.synthetic import *  # noqa: F403 - the names of synthetic.__all__

__all__ = [*real.__all__, *synthetic.__all__]
