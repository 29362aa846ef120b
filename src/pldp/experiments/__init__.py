"""Experiments: paper reproductions (specs, runner, figures, report) and evaluation-only oracles.

Needs the ``experiments`` extra (pandas, pyarrow, matplotlib, tqdm) and, for parallel runs,
the ``distributed`` extra (Dask).
"""

from pldp.experiments.oracles import OPResult, op_weights_with_ground_truth
from pldp.experiments.spec import Check, Experiment

__all__ = ["Check", "Experiment", "OPResult", "op_weights_with_ground_truth"]
