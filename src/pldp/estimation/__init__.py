"""Estimators: tally -> :class:`Estimate`."""

from pldp.estimation.api import METHODS, estimate
from pldp.estimation.combine import (
    combine,
    combined_variance,
    data_free_variance,
    level_sampling_variance,
    min_variance_weights,
)
from pldp.estimation.consistency import norm_sub, project_simplex
from pldp.estimation.result import Estimate, EstimateSet

__all__ = [
    "METHODS",
    "Estimate",
    "EstimateSet",
    "combine",
    "combined_variance",
    "data_free_variance",
    "estimate",
    "level_sampling_variance",
    "min_variance_weights",
    "norm_sub",
    "project_simplex",
]
