"""LLevels: user-level budgets over time, a memoized chain per budget level, the level in the clear.

The user-level protocols (:mod:`pldp.protocols.leveled`) protect one report at the user's level;
over rounds each report spends its level's budget again. :class:`LLevels` gives every level a
memoized chain of :mod:`pldp.mechanisms.longitudinal` (L-GRR or L-OSUE): a user at level
:math:`l` draws her *permanent* response of a value once, at :math:`\\varepsilon_{\\infty,l}`, keeps
it (a memo per level), and sends each report through a fresh *instantaneous* one, so that

* one report meets :math:`\\varepsilon_{1,l}`-LDP (the chained channel), and
* any number of her reports of one value meet :math:`\\varepsilon_{\\infty,l}`-LDP (they are
  functions of the permanent response and fresh coins).

Both claims are decided exactly per level (:meth:`pldp.channel.MemoNode.claims`, parallel
composition over the levels: a user runs one level's chain). The level travels in the clear with
each report, as in RCF, so the server tallies each level apart and everything of
:class:`~pldp.protocols.RCF` serves: each level's unbiased estimate through its *chained* channel
:math:`(p^*_l, q^*_l)`, combined with inverse-variance weights, Norm-Sub, the joint MLE, the
robust combination, and the closed-form variance. A user who changes level draws a new permanent
response at the new level (her reports of one value at two levels compose:
:math:`\\varepsilon_{\\infty,l} + \\varepsilon_{\\infty,l'}`).

Not deployable yet: the clients' memo keeps one permanent response per value, not per level
(:data:`pldp.channel.leveled.MEMO_LEVELS_REFUSAL`; a spec refuses the sampler).
"""

from __future__ import annotations

from typing import Any, Literal, Self, overload

import numpy as np

from pldp._validation import as_indices
from pldp.domain import Domain
from pldp.errors import BudgetError, ParameterError
from pldp.mechanisms.longitudinal import LGRR, LOSUE, Memo
from pldp.params import epsilons_of
from pldp.privacy import ComposedPrivacy
from pldp.protocols.leveled import LeveledProtocol, check_levels
from pldp.protocols.rcf import RCF, GroupedReports
from pldp.registry import register

__all__ = ["CHAINS", "LLevels"]

#: The memoized chains a level can use: L-GRR (direct) and L-OSUE (unary, one report OUE at eps_1).
CHAINS: dict[str, type[LGRR] | type[LOSUE]] = {"lgrr": LGRR, "losue": LOSUE}


@register
class LLevels(RCF):
    """Memoized chains at user-chosen budget levels, the level sent in the clear (module docstring).

    Parameters
    ----------
    eps_perm : array_like of float
        :math:`\\varepsilon_{\\infty,l}` of each level: the bound over any number of reports of one
        value. Strictly increasing, finite, > 0.
    eps_1 : array_like of float
        :math:`\\varepsilon_{1,l}` of each level: the bound of one report. Strictly increasing,
        ``0 < eps_1[l] < eps_perm[l]``. Held as ``levels`` (what one report meets).
    d : int or Domain
        The item domain (at least 2 items).
    chain : {"lgrr", "losue"}
        The memoized chain of every level (:data:`CHAINS`).

    Examples
    --------
    >>> proto = LLevels([1.0, 4.0], [0.5, 2.0], 4)
    >>> rep = proto.privacy()
    >>> rep.holds, [round(p.permanent_epsilon, 6) for p in rep.values()], round(rep.ldp_epsilon, 6)
    (True, [1.0, 4.0], 2.0)
    >>> rng = np.random.default_rng(0)
    >>> memo = proto.memo()
    >>> first, memo = proto.perturb([0, 1, 2], [0, 1, 1], rng, memo=memo)
    >>> [len(m) for m in memo]  # a permanent response per (user, value), kept per level
    [1, 2]
    """

    def __init__(self, eps_perm: Any, eps_1: Any, d: int | Domain, chain: Literal["lgrr", "losue"] = "lgrr") -> None:
        if chain not in CHAINS:
            raise ParameterError(f"chain must be one of {tuple(CHAINS)}, got {chain!r}")
        perm, one = check_levels(eps_perm), check_levels(eps_1)
        if perm.shape != one.shape:
            raise ParameterError(f"eps_perm and eps_1 need one budget per level, got {perm.size} and {one.size}")
        above = np.flatnonzero(one >= perm)
        if above.size:
            raise BudgetError(
                "each level needs eps_1 < eps_perm (one report, then any number of reports of one value); "
                + ", ".join(f"level {i}: {one[i]!r} >= {perm[i]!r}" for i in above[:5])
            )
        LeveledProtocol.__init__(self, one, d)
        self.eps_perm = perm
        self.chain = self.oracle = chain
        self.choices = (chain,) * self.t
        #: Each level's memoized chain (the same objects as :attr:`mechanisms`).
        self.chains = tuple(CHAINS[chain](float(p), float(e), self.domain) for p, e in zip(perm, one, strict=True))
        self.mechanisms = self.chains

    @property
    def eps_1(self) -> np.ndarray:
        """:math:`\\varepsilon_{1,l}` of each level (the same as ``levels``)."""
        return self.levels

    def __repr__(self) -> str:
        return (
            f"LLevels(eps_perm={self.eps_perm.tolist()}, eps_1={self.levels.tolist()}, d={self.d}, "
            f"chain={self.chain!r})"
        )

    def params(self) -> dict[str, Any]:
        """Canonical parameters: class, labels, ``levels`` (:math:`\\varepsilon_1`), ``eps_perm`` and the chain."""
        return {**self._base_params(), "eps_perm": self.eps_perm, "chain": self.chain}

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        one, dom = cls._params_levels(params)
        return cls(epsilons_of(params["eps_perm"]), one, dom, params["chain"])

    def privacy(self) -> ComposedPrivacy:
        """Both claims of every level's chain, each decided exactly (a user runs one level's chain).

        Each part is a :class:`~pldp.privacy.LongitudinalPrivacy`: its ``ldp_epsilon`` is one
        report's realised :math:`\\varepsilon_{1,l}`, its ``permanent_epsilon`` that of any number
        of reports of one value (:math:`\\varepsilon_{\\infty,l}`).
        """
        parts = {
            f"level {i} (eps_perm={p:g}, eps_1={e:g})": m.privacy()
            for i, (p, e, m) in enumerate(zip(self.eps_perm, self.levels, self.mechanisms, strict=True))
        }
        notion = "LDP at each user's level: eps_perm over any number of reports of one value, eps_1 per report"
        return ComposedPrivacy(notion, parts, "max")

    # -------------------------------------------------------------------- client
    def memo(self) -> tuple[Memo, ...]:
        """An empty memo per level (each level's chain keeps its own permanent responses), for
        :meth:`perturb`'s rounds."""
        return tuple(m.memo() for m in self.chains)

    @overload
    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> GroupedReports: ...

    @overload
    def perturb(
        self, items: Any, levels: Any, rng: np.random.Generator, *, memo: tuple[Memo, ...], users: Any = None
    ) -> tuple[GroupedReports, tuple[Memo, ...]]: ...

    def perturb(
        self,
        items: Any,
        levels: Any,
        rng: np.random.Generator,
        *,
        memo: tuple[Memo, ...] | None = None,
        users: Any = None,
    ) -> GroupedReports | tuple[GroupedReports, tuple[Memo, ...]]:
        """One report per user, with her level in the clear.

        Parameters
        ----------
        items, levels : array_like of int, shape (n,)
            Each user's item and budget level.
        rng : numpy.random.Generator
        memo : tuple of Memo, optional
            The users' permanent responses so far, one memo per level (:meth:`memo` starts them).
            Without it every user draws a fresh permanent response (a first report: the law
            ``tally``, ``simulate`` and the estimators describe).
        users : array_like of int, shape (n,), optional
            The users' ids in the memos (default ``0 .. n-1``).

        Returns
        -------
        GroupedReports, or (GroupedReports, tuple of Memo)
            With a ``memo``, also the memos holding the new permanent responses (the given ones
            are not changed).
        """
        x, lv = self._check_users(items, levels)
        if memo is None:
            if users is not None:
                raise ParameterError("users identify the rows of a memo: pass memo= too")
            return super().perturb(x, lv, rng)
        if not isinstance(memo, tuple) or len(memo) != self.t or not all(isinstance(m, Memo) for m in memo):
            raise ParameterError(f"memo must be a tuple of {self.t} Memo, one per level (LLevels.memo())")
        ids = np.arange(x.size, dtype=np.int64) if users is None else as_indices(users, "users").reshape(-1)
        if ids.shape != x.shape:
            raise ParameterError(f"users has {ids.size} entries for {x.size} items")
        data, memos = [], []
        for i, mech in enumerate(self.chains):
            sel = lv == i
            rep, kept = mech.perturb(x[sel], rng, memo=memo[i], users=ids[sel])
            data.append(rep)
            memos.append(kept)
        return GroupedReports(tuple(data), lv), tuple(memos)
