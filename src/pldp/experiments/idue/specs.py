"""IDUE experiments: the grids, panels and claims of Figs. 2-8 of Gu et al., as data."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

from pldp.experiments.idue.checks import check_clothing, check_ell, check_real, check_shares, check_theory
from pldp.experiments.idue.figures import by_dataset, clothing_panels, ell_panels, plot_theory
from pldp.experiments.idue.runs import FIG2_METHODS, PAPER, SINGLE_DATASETS, UNARY, run_itemsets, run_single
from pldp.experiments.spec import Experiment, grid

__all__ = ["EXPERIMENTS", "FIG4_EPS", "experiments"]

REPEATS = 10
EPSILONS = (1.0, 2.0, 3.0, 4.0, 5.0)
QUICK_EPS = (1.0, 3.0, 5.0)
FIG4_KS = (10, 20, 30, 50, 100, 200)
FIG4_EPS = 2.0
FIG5_SHARES = (0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.8)
FIG5_EPS = (1.0, 2.0)
FIG6_KS = (10, 20, 30, 40, 50)
FIG6_K = 20
FIG6_EPS = 2.0
CLOTHING_ELLS = (1, 2, 3, 4, 5, 6)
KOSARAK_ELLS = (1, 2, 3, 5, 8, 12, 16, 20)
KOSARAK_NOTE = "Kosarak is the bundled real prefix (36,682 users, 17,034 items), not the full 990,002 users."


def _fig5_grid(shares: Sequence[float]) -> list[dict[str, Any]]:
    return grid(dataset=SINGLE_DATASETS, epsilon=(FIG5_EPS[0],), epsilon2=(FIG5_EPS[1],), share=shares)


#: Figs. 2-8 of Gu et al. (ICDE 2020), with the bundled Kosarak prefix.
EXPERIMENTS: tuple[Experiment, ...] = (
    Experiment(
        paper=PAPER,
        name="fig2",
        title="MSE vs ε: empirical and theoretical (eq. 7), synthetic single-item data",
        claim="The empirical MSE is very close to the theoretical one; IDUE (MinID-LDP) outperforms RAPPOR and "
        "OUE (LDP at the smallest budget); opt1 and opt2 have somewhat larger MSE than opt0.",
        settings=grid(dataset=("powerlaw", "uniform"), epsilon=EPSILONS),
        run=functools.partial(run_single, methods=FIG2_METHODS, theory=True),
        repeats=REPEATS,
        quick_settings=grid(dataset=("powerlaw", "uniform"), epsilon=QUICK_EPS),
        plot=plot_theory,
        check=check_theory,
        notes="Power-law: 100 items, 100,000 users (exponent 2); uniform: 1,000 items, 100,000 users; "
        "data and budgets redrawn per repeat; theory = eq. 7 summed over items on the realised counts.",
        full_ours="empirical/eq. 7 MSE 0.954 (power-law), 0.995 (uniform), every |z| <= 2.8; IDUE-opt0 >= 1.51x "
        "better than RAPPOR and OUE; opt0 <= opt1, opt2",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig3",
        title="MSE and RE(20) vs ε on Retail and Kosarak (first item per user)",
        claim="IDUE has the smallest MSE and RE for all ε.",
        settings=grid(dataset=SINGLE_DATASETS, epsilon=EPSILONS),
        run=functools.partial(run_single, methods=UNARY, ks=(20,)),
        repeats=REPEATS,
        quick_settings=grid(dataset=SINGLE_DATASETS, epsilon=(2.0, 4.0)),
        quick_repeats=4,
        panels=by_dataset("fig3", "epsilon", ("mse", "re"), k=20),
        check=check_real,
        notes=KOSARAK_NOTE,
        full_ours="IDUE smallest MSE and RE(20) everywhere; OUE/IDUE 1.54-1.64x (MSE), 1.12-1.56x (RE)",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig4",
        title=f"RE(k) vs k on Retail and Kosarak (ε = {FIG4_EPS:g})",
        claim="IDUE has the smallest RE for all k.",
        settings=grid(dataset=SINGLE_DATASETS, epsilon=(FIG4_EPS,)),
        run=functools.partial(run_single, methods=UNARY, ks=FIG4_KS),
        repeats=REPEATS,
        quick_settings=grid(dataset=SINGLE_DATASETS, epsilon=(FIG4_EPS,)),
        quick_repeats=4,
        panels=by_dataset("fig4", "k", ("re",)),
        check=check_real,
        notes="The paper does not give the ε of Fig. 4; we use ε = 2.",
        quick_decides=False,  # RE(k) at 4 repeats (even at 10) is above OUE's in a cell at some seeds
        full_ours="IDUE smallest RE(k) for every k; OUE/IDUE 1.23-1.46x",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig5",
        title="Two budgets ε1 = 1 < ε2 = 2: MSE and RE(50) vs the share of items at ε1",
        claim="With few items at ε1 IDUE gains much from MinID-LDP; above about 40 % it has almost the same MSE and "
        "RE as OUE (which beats RAPPOR).",
        settings=_fig5_grid(FIG5_SHARES),
        run=functools.partial(run_single, methods=UNARY, ks=(50,)),
        repeats=REPEATS,
        quick_settings=_fig5_grid((0.01, 0.1, 0.5)),
        panels=by_dataset("fig5", "share", ("mse", "re"), k=50),
        check=check_shares,
        notes="Dataset and budgets of Fig. 5 are not stated; we use Retail and Kosarak (first item) with ε1 = 1, "
        "ε2 = 2 and exact shares (items assigned to the levels by a random permutation).",
        full_ours="MSE OUE/IDUE 2.23x at 1 % of items at ε1 (Retail and Kosarak), <= 1.02x from 40 % up",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig6",
        title="Clothing item-sets, ℓ = 2: precision and RE of the top k, vs ε (k = 20) and vs k (ε = 2)",
        claim="IDUE-PS has the smallest RE; for a smaller ε or k (ε = 1; k = 10 or 20) its top-k precision may be "
        "worse than OUE-PS's (for larger ε and k it is the highest).",
        settings=grid(dataset=("clothing",), ell=(2,), epsilon=EPSILONS),
        run=functools.partial(run_itemsets, methods=UNARY, ks=FIG6_KS),
        repeats=REPEATS,
        quick_settings=grid(dataset=("clothing",), ell=(2,), epsilon=(1.0, 2.0, 3.0)),
        quick_repeats=4,
        panels=clothing_panels(FIG6_K, FIG6_EPS),
        check=check_clothing,
        quick_decides=False,  # per-repeat precision and RE margins of a few % decide it: seed-dependent
        full_ours="IDUE-PS smallest RE in 25/25 (ε, k) cells (margin 1.05x); precision below OUE-PS in 15/25 cells, "
        "all at ε <= 2 or k <= 30; the highest at ε >= 3 with k >= 40",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig7",
        title="Clothing item-sets: IDUE-PS RE(20) and precision vs ℓ for several ε",
        claim="The best ℓ depends on the data and grows with ε (variance dominates at small ε, truncation bias at "
        "large ε).",
        settings=grid(dataset=("clothing",), epsilon=EPSILONS),
        run=functools.partial(run_itemsets, methods=("IDUE",), ks=(20,), ells=CLOTHING_ELLS),
        repeats=REPEATS,
        quick_settings=grid(dataset=("clothing",), epsilon=(1.0, 5.0)),
        panels=ell_panels("fig7", "clothing", 20),
        check=check_ell,
        full_ours="best ℓ 1, 1, 2, 2, 2 for ε = 1..5",
        full_verdict="agrees",
    ),
    Experiment(
        paper=PAPER,
        name="fig8",
        title="Kosarak item-sets: IDUE-PS RE(100) and precision vs ℓ for several ε",
        claim="The best ℓ grows with ε; at a small ℓ (such as 5) RE hardly falls with ε (truncation bias dominates).",
        settings=grid(dataset=("kosarak",), epsilon=EPSILONS),
        run=functools.partial(run_itemsets, methods=("IDUE",), ks=(100,), ells=KOSARAK_ELLS),
        repeats=REPEATS,
        quick_settings=grid(dataset=("kosarak",), epsilon=(1.0, 5.0)),
        panels=ell_panels("fig8", "kosarak", 100),
        check=check_ell,
        notes="Kosarak is the bundled real prefix (36,682 users, mean set size 8), so counts are about 27x "
        "smaller than in the paper and the noise is relatively larger: the best ℓ is smaller.",
        full_ours="best ℓ 1, 2, 3, 5, 8 for ε = 1..5",
        full_verdict="agrees",
    ),
)


def experiments(kosarak: str | None = None) -> list[Experiment]:
    """Figs. 2-8 of Gu et al. (ICDE 2020).

    Parameters
    ----------
    kosarak : str, optional
        The full Kosarak file (``pldp reproduce --kosarak``), put into the settings on Kosarak as
        ``source`` (:meth:`Experiment.with_source`); default: the bundled prefix.
    """
    return [exp.with_source("kosarak", kosarak) for exp in EXPERIMENTS]
