"""Estimators: tally -> :class:`Estimate`."""

from pldp.estimation.api import METHODS, estimate
from pldp.estimation.consistency import norm_sub, project_simplex
from pldp.estimation.result import Estimate

__all__ = ["METHODS", "Estimate", "estimate", "norm_sub", "project_simplex"]
