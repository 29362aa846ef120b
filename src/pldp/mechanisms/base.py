"""The interface of the single randomizers: :class:`Mechanism`, a pure frequency oracle."""

from __future__ import annotations

from abc import abstractmethod
from typing import Any, Literal

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.channel.direct import DirectNode
from pldp.channel.unary import UnaryNode
from pldp.domain import Domain
from pldp.errors import BudgetError, EstimationError
from pldp.estimation.pure import COUNT_METHODS, estimate_counts
from pldp.estimation.result import Estimate
from pldp.fingerprint import canonical_labels
from pldp.oracle import FrequencyOracle
from pldp.tally import Tally

__all__ = ["Mechanism"]


class Mechanism(FrequencyOracle):
    """A public, immutable description of one user's randomizer: a *pure* frequency oracle.

    For each item ``y`` a report either *supports* ``y`` or not, with

    .. math::

        \\Pr[\\text{report supports } y \\mid x = y] = p^*_y, \\qquad
        \\Pr[\\text{report supports } y \\mid x \\ne y] = q^*_y,

    so that the support count :math:`C_y` of ``n`` reports has mean
    :math:`n q^*_y + n_y (p^*_y - q^*_y)` and the generic unbiased estimator is
    :math:`\\hat n_y = (C_y - n q^*_y) / (p^*_y - q^*_y)` (Wang et al., USENIX Security 2017).

    Subclasses define the report format (``family``), how to perturb a batch of users, how to
    tally reports, exact count-level simulation and an exact privacy check; estimation is the
    same for all (:func:`pldp.estimation.pure.estimate_counts`).
    """

    params_key = "mechanism"
    methods = COUNT_METHODS
    #: Report family: ``"direct"`` (a report is one item) or ``"unary"`` (one bit per item).
    family: str = ""
    #: Name used in error messages.
    _name: str = "Mechanism"
    #: What :attr:`support`'s two probabilities are, in a table's head (``pldp mechanism show``).
    support_names: tuple[str, str] = ("p* (x's report supports x)", "q* (another's supports x)")
    _budgets: ItemBudgets

    # ------------------------------------------------------------------ budgets
    def _check_budgets(self, budgets: Any, *, all_sensitive: bool) -> ItemBudgets:
        """``budgets`` if they are :class:`~pldp.ItemBudgets` over at least 2 items, with every item
        sensitive (``all_sensitive``) or at least one (else :class:`~pldp.errors.BudgetError`)."""
        if not isinstance(budgets, ItemBudgets):
            raise BudgetError(f"expected ItemBudgets, got {type(budgets).__name__}")
        if all_sensitive and budgets.n_sensitive != budgets.d:
            raise BudgetError(
                f"{self._name} protects every item: non-sensitive items (None/inf) are not supported, "
                f"got {budgets.d - budgets.n_sensitive} of them"
            )
        if not all_sensitive and budgets.n_sensitive == 0:
            raise BudgetError(
                f"{self._name} needs at least one sensitive item: with none, every user would report "
                "her own item in the clear"
            )
        if budgets.d < 2:
            raise BudgetError(f"{self._name} needs a domain of at least 2 items, got {budgets.d}")
        return budgets

    @property
    def domain(self) -> Domain:
        """The item labels."""
        return self._budgets.domain

    @property
    def budgets(self) -> ItemBudgets:
        """Budget of each item (``inf``: non-sensitive)."""
        return self._budgets

    def _budget_params(self) -> dict[str, Any]:
        """The parameters every mechanism has: its class, family, labels and budgets."""
        return {
            "mechanism": type(self).__name__,
            "family": self.family,
            "labels": canonical_labels(self.domain.labels),
            "epsilons": self._budgets.epsilons,
        }

    @property
    @abstractmethod
    def support(self) -> tuple[np.ndarray, np.ndarray]:
        """``(p_star, q_star)``: per-item support probabilities (see class docstring)."""

    @abstractmethod
    def sampler(self) -> DirectNode | UnaryNode:
        """The mechanism's sampler node: its thresholds on the ``2**-32`` grid and its claims."""

    @abstractmethod
    def channel(self) -> np.ndarray:
        """The channel matrix, rows = inputs (``Q[x, y] = Pr(y | x)`` for direct encoding)."""

    @abstractmethod
    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """Randomize a batch of users' item indices (a 1-D array), one report per user."""

    @abstractmethod
    def tally(self, reports: Any) -> Tally:
        """Aggregate a batch of reports into a mergeable :class:`~pldp.tally.Tally`."""

    @abstractmethod
    def simulate(self, true_counts: Any, rng: np.random.Generator) -> Tally:
        """Draw the tally of users with the given true item counts, at count level, exactly."""

    def _tally(self, n: int, counts: np.ndarray) -> Tally:
        """A tally of this mechanism (its family and fingerprint)."""
        return Tally(n, counts, self.family, self.fingerprint)

    def _drawn_tally(self, n: int, counts: np.ndarray) -> Tally:
        """:meth:`_tally` of counts :meth:`simulate` has just drawn (new, valid by construction); a
        subclass that makes its own tallies (its own :meth:`_tally`) gets them from it."""
        if type(self)._tally is not Mechanism._tally:
            return self._tally(n, counts)
        return Tally._drawn(n, counts, self.family, self.fingerprint)

    def estimate(
        self,
        tally: Tally,
        method: str = "unbiased",
        *,
        solver: Literal["auto", "exact", "em"] = "auto",
        tol: float = 1e-10,
        max_iter: int = 100_000,
        targets: Any = None,
    ) -> Estimate:
        """Estimate the item distribution from a tally of this mechanism's reports.

        ``method`` is ``"unbiased"``, ``"norm_sub"``, ``"mle"`` or ``"recover"``; the options tune
        the MLE solver, ``targets`` names suspected targets for ``"recover"``. See
        :func:`pldp.estimation.pure.estimate_counts`.

        Raises
        ------
        EstimationError
            Unknown method or solver, a tally of another mechanism (fingerprint), family or
            size, or a tally with no reports.
        """
        self._check_method(method)
        tally = self._check_tally(tally)
        if tally.kind != self.family or tally.d != self.d:
            raise EstimationError(
                f"a {tally.kind} tally over {tally.d} items does not fit {self!r} ({self.family}, d={self.d})"
            )
        return estimate_counts(
            self.family,
            self.support,
            self.domain,
            tally.n,
            tally.counts,
            method,
            solver=solver,
            tol=tol,
            max_iter=max_iter,
            delta=self._gap(),
            targets=targets,
        )

    def _gap(self) -> float | None:
        """The common gap :math:`p^* - q^*` of a direct-encoding channel, exactly as held (else None)."""
        return None
