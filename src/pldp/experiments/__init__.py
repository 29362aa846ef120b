"""Experiment support: evaluation-only tools that need the ground truth (never estimators)."""

from pldp.experiments.oracles import OPResult, op_weights_with_ground_truth

__all__ = ["OPResult", "op_weights_with_ground_truth"]
