"""Murakami & Kawamoto 2019 experiments: the grids, outputs and claims, as data."""

from __future__ import annotations

from pldp.experiments.murakami2019.checks import check_adult, check_mse
from pldp.experiments.murakami2019.figures import plot_adult, plot_mse_eps
from pldp.experiments.murakami2019.runs import PAPER, run_mse
from pldp.experiments.spec import Experiment, grid

__all__ = ["ADULT_EPS_GRID", "EPS_GRID", "EXPERIMENTS", "SIZES", "experiments"]

#: The budgets of the Zipf sweep: from high privacy to the low privacy regime (e^10 > d).
EPS_GRID: tuple[float, ...] = (0.1, 0.5, 1.0, 2.0, 4.0, 6.0, 8.0, 10.0)
#: The sizes |X_S| of the sensitive set on the Zipf population (d = 1,000).
SIZES: tuple[int, ...] = (10, 100)
#: The budgets on Adult.
ADULT_EPS_GRID: tuple[float, ...] = (0.5, 1.0, 2.0, 4.0, 8.0, 10.0)
REPEATS = 100
QUICK_REPEATS = 10

_NOTES = (
    "Our settings (the paper's datasets and grids were not at hand). Each repeat draws n users i.i.d. from the "
    "population and every method perturbs the same counts; MSE = sum over the items of (f_hat - p)^2 of the "
    "unbiased estimate (no projection), against its closed form sum_y m_y(1-m_y)/(n delta_y^2); non-private = "
    "the users' empirical distribution (sum_y p_y(1-p_y)/n). X_S: the first |X_S| items of a permutation seeded "
    "by (2019, d), a random subset. uRAP: theta = 1/2; uRAP-RAPPOR: theta = e^(eps/2)/(e^(eps/2)+1)."
)

#: MSE against epsilon on a Zipf population and on Adult's (education, native-country) pairs.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        paper=PAPER,
        name="mse_eps",
        title="MSE against epsilon, Zipf(1) over d = 1,000, n = 100,000, |X_S| = 10 and 100",
        claim='uRR and uRAP "provide much higher utility than the existing LDP mechanisms when there are a lot of '
        'non-sensitive data", and "when most of the data are non-sensitive, [they] even provide almost the same '
        'utility as non-private mechanisms in the low privacy regime" (the abstract).',
        settings=grid(data=("zipf",), d=(1000,), exponent=(1.0,), n=(100_000,), sensitive=SIZES, epsilon=EPS_GRID),
        run=run_mse,
        repeats=REPEATS,
        quick_settings=grid(
            data=("zipf",), d=(1000,), exponent=(1.0,), n=(100_000,), sensitive=SIZES, epsilon=(0.1, 1.0, 4.0, 10.0)
        ),
        quick_repeats=QUICK_REPEATS,
        plot=plot_mse_eps,
        check=check_mse,
        notes=_NOTES,
        full_verdict="agrees",
        full_ours="uRR < RR, both uRAPs < OUE and RAPPOR in 16/16 cells (uRR/RR 9e-5-0.92); |X_S| = 10, eps = 10: "
        "uRR 1.00x, uRAP-RAPPOR 1.08x, uRAP 2.0x non-private; 112/112 cells in their intervals",
    ),
    Experiment(
        paper=PAPER,
        name="adult",
        title="MSE against epsilon on Adult's 484 (education, native-country) pairs, n = 48,842, |X_S| = 10 and 50",
        claim="On census data too, uRR and uRAP are more accurate than RR, RAPPOR and OUE when most items are "
        "non-sensitive.",
        settings=grid(data=("adult",), sensitive=(10, 50), epsilon=ADULT_EPS_GRID),
        run=run_mse,
        repeats=REPEATS,
        quick_settings=grid(data=("adult",), sensitive=(10, 50), epsilon=(1.0, 4.0, 10.0)),
        quick_repeats=QUICK_REPEATS,
        plot=plot_adult,
        check=check_adult,
        notes=_NOTES.replace("the population", "the population (Adult's pair frequencies, n = its 48,842 rows)"),
        full_verdict="agrees",
        full_ours="uRR < RR, both uRAPs < OUE and RAPPOR in 12/12 cells (uRR/RR 4e-4-0.95); |X_S| = 10, eps = 10: "
        "uRR 1.00x, uRAP-RAPPOR 1.09x, uRAP 1.9x non-private; 84/84 cells in their intervals",
    ),
)


def experiments() -> list[Experiment]:
    """The MSE comparisons of Murakami & Kawamoto (USENIX Security 2019): Zipf and Adult."""
    return list(EXPERIMENTS)
