"""Wang, Li & Jha 2021 experiments: the grids, outputs and claims, as data."""

from __future__ import annotations

from pldp.experiments.spec import Experiment, grid
from pldp.experiments.wang2021.checks import check_kosarak, check_zipf
from pldp.experiments.wang2021.figures import plot_kosarak, plot_zipf
from pldp.experiments.wang2021.runs import PAPER, run_kosarak, run_zipf

__all__ = ["EPS_GRID", "EXPERIMENTS", "experiments"]

#: The budgets of both sweeps.
EPS_GRID: tuple[float, ...] = (1.0, 2.0, 3.0, 4.0, 5.0, 6.0)
#: The answers asked for and scored.
TOP = 10
REPEATS = 5

_NOTES = (
    "Precision: share of the returned answers in the true top 10 (SFP returns only the words its puzzle assembles, "
    "so its precision stays near 1 while its recall is low); recall: share of the true top 10 returned; "
    "relative error |f_hat - f| / f of the correctly found answers' estimates. Bands: 95 % Student-t over the "
    "repeats. TreeHist a byte a step, SFP one-byte fragments tagged by an 8-bit hash, both splitting the budget "
    "in half; every protocol keeps `top` prefixes a step. Sizes and thresholds are ours (the paper's grids were "
    "not at hand); the quick scale's users and repeats are too few to decide the claim."
)

#: Heavy-hitter identification against epsilon, on synthetic Zipf data and on Kosarak.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        paper=PAPER,
        name="zipf",
        title="Identifying the top 10 of Zipf(1.3) words against epsilon: PEM, TreeHist, SFP",
        claim="PEM identifies the heavy hitters better as epsilon grows, with high precision at large epsilon, and "
        "better than the other protocols (ours: PEM's mean precision rises by at least 0.3 from eps = 1 to eps = 6, "
        "where it is at least 0.8, and no other protocol's mean recall is above PEM's 95 % band at any epsilon).",
        settings=grid(epsilon=EPS_GRID, n=(200_000,), words=(3_000,), max_bytes=(8,), s=(1.3,), top=(TOP,)),
        run=run_zipf,
        repeats=REPEATS,
        quick_settings=grid(epsilon=(1.0, 6.0), n=(20_000,), words=(3_000,), max_bytes=(8,), s=(1.3,), top=(TOP,)),
        plot=plot_zipf,
        check=check_zipf,
        notes="n users i.i.d. Zipf(1.3) over 3,000 fixed random lower-case words of 3-8 bytes (max_bytes = 8). "
        + _NOTES,
        quick_decides=False,
        full_verdict="agrees",
        full_ours="PEM precision 0.36 (eps 1) to 0.92 (eps 6); no other recall above PEM's band at 6/6 eps; "
        "recall at eps 6 PEM 0.92, TreeHist 0.84, SFP 0.72",
    ),
    Experiment(
        paper=PAPER,
        name="kosarak",
        title="Identifying the top 10 of Kosarak's first items (as text) against epsilon",
        claim="On real data PEM finds most heavy hitters at large epsilon, more than the other protocols (ours: "
        "PEM's mean recall rises by at least 0.3 to at least 0.8 at eps = 6, and no other protocol's mean recall "
        "is above PEM's 95 % band at any epsilon).",
        settings=grid(dataset=("kosarak",), epsilon=EPS_GRID, max_bytes=(5,), top=(TOP,)),
        run=run_kosarak,
        repeats=REPEATS,
        quick_settings=grid(dataset=("kosarak",), epsilon=(2.0, 6.0), max_bytes=(5,), top=(TOP,)),
        plot=plot_kosarak,
        check=check_kosarak,
        notes="Each user's first item of the bundled Kosarak prefix (36,682 users; --kosarak PATH reads the full "
        "file) as text, its id of at most 5 digits (max_bytes = 5). " + _NOTES,
        quick_decides=False,
        full_verdict="agrees",
        full_ours="PEM recall 0.22 (eps 1) to 0.84 (eps 6); no other recall above PEM's band at 6/6 eps; recall at "
        "eps 6 PEM 0.84, TreeHist 0.58, SFP 0.50",
    ),
)


def experiments(kosarak: str | None = None) -> list[Experiment]:
    """The heavy-hitter identification sweeps of Wang, Li & Jha (IEEE TDSC 2021).

    Parameters
    ----------
    kosarak : str, optional
        The full Kosarak file (``pldp reproduce --kosarak``), put into the Kosarak settings as ``source``.
    """
    return [exp.with_source("kosarak", kosarak) for exp in EXPERIMENTS]
