"""One repeat of an attack setting: honest users at count level, fake users report by report.

A setting names the oracle (:mod:`~pldp.experiments.attacks.catalog`), the honest population
(``n``, ``d``, ``zipf``), the share of fake users ``beta`` (:math:`m/(n+m)`, Cao et al.'s), the
number ``r`` of targets (the ``r`` rarest items), the strategies and the estimation methods. A
repeat draws one honest tally (``oracle.simulate``: count level) and, for every strategy, the
tally of ``m`` fake reports (:func:`pldp.attacks.fake_reports`), and records for every method the
gain of the targets (:func:`pldp.attacks.gain`: the estimate with the fakes minus without, the
same honest tally for every strategy and method) and the closed form
(:func:`pldp.attacks.expected_gain`, of the unbiased estimate). A method that refuses a tally
(e.g. PLDP-FEBSF's AUEM when the estimated :math:`p^* - q^* \\le 0`) gives a row with
``failed = 1`` and no gain.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.attacks import expected_gain, fake_reports, gain_is_exact, promoted, rule_of
from pldp.errors import EstimationError
from pldp.experiments.attacks.catalog import MEAN_BUDGET, build, honest_counts, honest_data
from pldp.experiments.paths import observe, path_of

__all__ = ["DEFAULT_METHODS", "fakes_for", "run_repeat", "run_strategies"]

#: The estimation methods an experiment runs where the oracle has them (``"robust"`` and any
#: method named in the setting join them).
DEFAULT_METHODS: tuple[str, ...] = ("unbiased", "norm_sub")


def fakes_for(n: int, beta: float) -> int:
    """:math:`m` such that :math:`m/(n+m)` is ``beta`` (rounded)."""
    return round(beta * n / (1.0 - beta))


def run_strategies(
    oracle: Any,
    data: tuple[Any, ...],
    honest: Any,
    targets: np.ndarray,
    m: int,
    strategies: Sequence[str],
    methods: Sequence[str],
    rng: np.random.Generator,
) -> list[dict[str, Any]]:
    """The rows of one honest tally under every strategy (that applies) and method (that exists).

    The honest estimate of each method is computed once for all strategies, and the poisoned tally
    (honest + fake) once for all methods: the rows are what :func:`pldp.attacks.gain` gives.
    """
    rows = []
    rule = rule_of(oracle)
    methods = [x for x in methods if x in oracle.methods]
    before: dict[str, Any] = {}  # method -> the honest frequencies, or the refusal
    for method in methods:
        try:
            before[method] = rule.frequencies(oracle, honest, method, {})
        except EstimationError as exc:
            before[method] = exc
    for strategy in (s for s in strategies if s in rule.strategies):
        level = getattr(oracle, "t", getattr(oracle, "n_levels", 1)) // 2 if strategy == "level" else None
        chosen = promoted(oracle, targets, strategy)
        poisoned = honest + oracle.tally(fake_reports(oracle, chosen, m, rng=rng, strategy=strategy, level=level))
        closed = expected_gain(oracle, chosen, m, *data, strategy=strategy, level=level)
        exact = gain_is_exact(oracle, strategy)
        for method in methods:
            value, failed = math.nan, 1
            if not isinstance(before[method], EstimationError):
                try:
                    after = rule.frequencies(oracle, poisoned, method, {})
                    value, failed = rule.total(rule.difference(after, before[method]), chosen), 0
                except EstimationError:
                    pass
            rows.append(
                {
                    "strategy": strategy,
                    "method": method,
                    "gain": value,
                    "failed": failed,
                    "expected": math.nan if closed is None or method != "unbiased" else closed,
                    "exact": int(exact and closed is not None),
                    "m": m,
                }
            )
    return rows


def run_repeat(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """One repeat of ``setting`` (module docstring)."""
    d, n = int(setting["d"]), int(setting["n"])
    levels = setting.get("item_levels")
    oracle = build(
        setting["protocol"], d, float(setting.get("eps", MEAN_BUDGET)), None if levels is None else int(levels)
    )
    counts = honest_counts(n, d, float(setting.get("zipf", 1.0)))
    data = honest_data(oracle, counts, rng)
    honest = observe(oracle, *data, rng=rng, path=path_of(setting))
    targets = np.arange(d - int(setting.get("r", 1)), d)
    methods = list(dict.fromkeys([*setting.get("methods", DEFAULT_METHODS), "robust"]))
    m = fakes_for(n, float(setting["beta"]))
    return run_strategies(oracle, data, honest, targets, m, setting["strategies"], methods, rng)
