"""Datasets: synthetic generators described by the papers (real data loaders come later)."""

from pldp.datasets.synthetic import zipf_counts, zipf_items

__all__ = ["zipf_counts", "zipf_items"]
