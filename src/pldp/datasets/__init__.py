"""Datasets: synthetic generators described by the papers (real data loaders come later)."""

from pldp.datasets.synthetic import mpldp_dataset, zipf_counts, zipf_items, zipf_probabilities

__all__ = ["mpldp_dataset", "zipf_counts", "zipf_items", "zipf_probabilities"]
