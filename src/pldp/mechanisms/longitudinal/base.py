"""What every memoized chain shares: the permanent response, the memo, rounds, and the two claims.

A longitudinal mechanism (:class:`Longitudinal`) holds a *permanent* mechanism (a pldp
:class:`~pldp.DirectEncoding` or :class:`~pldp.UnaryEncoding`: the PRR, at budgets
:math:`\\varepsilon_\\infty`) and an *instantaneous* response applied to the PRR's output (the IRR),
chosen so that one report meets :math:`\\varepsilon_1`. The library runs it three ways:

* ``perturb(x, rng)``: one round in which every user draws her PRR afresh, as a device does the
  first time it reports a value (one report per user has the chained channel: this is what
  ``tally``, ``simulate`` and the estimators describe);
* ``permanent(x, rng)`` and ``instantaneous(prr, rng)``: the two stages apart;
* ``perturb(x, rng, memo=memo)``: a round of users who keep their PRRs in ``memo`` (a
  :class:`~pldp.mechanisms.longitudinal.memo.Memo`, from :meth:`Longitudinal.memo`); returns the
  reports and the memo with the new PRRs.

One round's tally has the same law with or without a memo (each user's PRR is drawn once, and given
no earlier report its law is the PRR's), so ``simulate`` describes every round; the rounds of one
memo are not independent of each other.
"""

from __future__ import annotations

from abc import abstractmethod
from functools import cached_property
from typing import Any, overload

import numpy as np

from pldp._validation import as_indices, check_index_range
from pldp.channel.memo import MemoNode
from pldp.errors import BudgetError, ParameterError
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.longitudinal.memo import Memo
from pldp.privacy import PrivacyCheck
from pldp.privacy.longitudinal import LongitudinalPrivacy

__all__ = ["Longitudinal"]


class Longitudinal(Mechanism):
    """A memoized chain: a permanent response per value, an instantaneous one per report (module docstring).

    Subclasses set ``_prr`` (the permanent mechanism), ``_budgets`` (:math:`\\varepsilon_1` of each
    item) and the instantaneous response, and implement the two stages.
    """

    _prr: Mechanism

    # ------------------------------------------------------------------ parameters
    @property
    def permanent_mechanism(self) -> Mechanism:
        """The permanent randomized response: a pldp mechanism at budgets :math:`\\varepsilon_\\infty`."""
        return self._prr

    @property
    def permanent_budgets(self) -> Any:
        """:math:`\\varepsilon_\\infty` of each item: the budgets of the permanent mechanism."""
        return self._prr.budgets

    def _check_one(self) -> None:
        """Refuse one-report budgets above the permanent ones (one report cannot leak more than all the
        reports of its value)."""
        one, perm = self._budgets.epsilons, self._prr.budgets.epsilons
        if self._budgets.domain != self._prr.domain:
            raise BudgetError("the one-report budgets and the permanent mechanism must be over the same items")
        above = np.flatnonzero(one > perm)
        if above.size:
            labels = self.domain.labels
            raise BudgetError(
                "eps_1 must not exceed eps_perm (a report reveals at most what all reports of its value do); "
                + ", ".join(f"{labels[i]!r}: {one[i]!r} > {perm[i]!r}" for i in above[:5])
            )

    def sampler(self) -> MemoNode:  # type: ignore[override]  # the protocols that nest a node take no chain
        """The memo node: the permanent node (:math:`\\varepsilon_\\infty`), the instantaneous thresholds
        and the one-report claim (:math:`\\varepsilon_1`). Not a direct or unary node, as a one-shot
        mechanism's is: no protocol nests a memoized chain (padding and leveled protocols build theirs)."""
        return self._node

    @cached_property
    def _node(self) -> MemoNode:
        return self._build_node()

    @abstractmethod
    def _build_node(self) -> MemoNode: ...

    # ---------------------------------------------------------------------- client
    @abstractmethod
    def permanent(self, x: Any, rng: np.random.Generator) -> np.ndarray:
        """The permanent responses of items ``x``: items (direct) or bit-packed rows (unary)."""

    @abstractmethod
    def instantaneous(self, prr: Any, rng: np.random.Generator) -> np.ndarray:
        """One report of each permanent response ``prr`` (as :meth:`permanent` returns them)."""

    @abstractmethod
    def _fresh(self, x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        """One round with a fresh permanent response per user: both stages in one pass, or one draw from
        the chained channel where its grid allows it exactly (the same law)."""

    @abstractmethod
    def _empty_memo(self) -> Memo: ...

    def memo(self) -> Memo:
        """An empty memo of this mechanism's permanent responses, for :meth:`perturb`'s rounds."""
        return self._empty_memo()

    def _indices(self, x: Any) -> np.ndarray:
        arr = as_indices(x, "x").reshape(-1)
        check_index_range(arr, self.d, "x")
        return arr

    @overload
    def perturb(self, x: Any, rng: np.random.Generator) -> np.ndarray: ...

    @overload
    def perturb(
        self, x: Any, rng: np.random.Generator, *, memo: Memo, users: Any = None
    ) -> tuple[np.ndarray, Memo]: ...

    def perturb(
        self, x: Any, rng: np.random.Generator, *, memo: Memo | None = None, users: Any = None
    ) -> np.ndarray | tuple[np.ndarray, Memo]:
        """One report per user.

        Parameters
        ----------
        x : array_like of int, shape (n,)
            Each user's item.
        rng : numpy.random.Generator
        memo : Memo, optional
            The users' permanent responses so far (:meth:`memo` starts one). Without it every user
            draws a fresh one (a first report).
        users : array_like of int, shape (n,), optional
            The users' ids in ``memo`` (default ``0 .. n-1``).

        Returns
        -------
        reports, or (reports, memo)
            Reports as :meth:`tally` takes them; with a ``memo``, also the memo holding the new
            permanent responses (the given one is not changed).
        """
        if memo is None:
            if users is not None:
                raise ParameterError("users identify the rows of a memo: pass memo= too")
            return self._fresh(self._indices(x), rng)
        prr, memo = self.remember(x, rng, memo, users)
        return self.instantaneous(prr, rng), memo

    def remember(self, x: Any, rng: np.random.Generator, memo: Memo, users: Any = None) -> tuple[np.ndarray, Memo]:
        """The permanent response of each user's item: the memo's, or a fresh one (drawn once per new
        (user, item), whatever the number of its rows), and the memo holding the new ones."""
        arr = self._indices(x)
        memo = memo.check(self.fingerprint)
        ids = np.arange(arr.size, dtype=np.int64) if users is None else as_indices(users, "users").reshape(-1)
        if ids.shape != arr.shape:
            raise ParameterError(f"users has {ids.size} entries for {arr.size} items")
        keys = ids * self.d + arr
        idx, found = memo.lookup(keys)
        new_keys, back = np.unique(keys[~found], return_inverse=True)
        drawn = self.permanent(new_keys % self.d, rng)
        out = np.empty((arr.size, *memo.responses.shape[1:]), dtype=memo.responses.dtype)
        out[found] = memo.responses[idx[found]]
        out[~found] = drawn[back]
        return out, memo.with_responses(new_keys, drawn)

    # --------------------------------------------------------------------- privacy
    @abstractmethod
    def _one_report_check(self) -> PrivacyCheck:
        """The float check of the chained channel against :math:`\\varepsilon_1` (from the node's exact integers)."""

    def privacy(self) -> LongitudinalPrivacy:
        """Both claims: the permanent mechanism's (:math:`\\varepsilon_\\infty`, any number of reports of
        one value) and the chained channel's (:math:`\\varepsilon_1`, one report), each per output or
        pair of items, and every claim of the sampler node decided exactly.

        Neither bounds a device's whole history: whether and when its value changes leaks more with
        every report (:func:`pldp.privacy.over_rounds`)."""
        rows, _ = self._node.claims()
        notion = f"{self.notion} (eps_inf over any number of reports of one value, eps_1 per report)"
        return LongitudinalPrivacy(notion, self._prr.privacy(), self._one_report_check(), all(r.holds for r in rows))

    @property
    @abstractmethod
    def notion(self) -> str:
        """The notion of the one-report claim (``"LDP"``, ``"IPLDP"``, ``"MinID-LDP"``, ...)."""
