"""Per-item privacy budgets and the assignment policies of the papers.

An :class:`ItemBudgets` gives every item of a domain either a finite budget
:math:`\\varepsilon_x > 0` (the item is *sensitive*, :math:`x \\in D_S`) or ``inf`` (the item
is *non-sensitive*, :math:`x \\in D_N`). Item-level mechanisms (IPRR, URR, IDUE) are built
from one.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from pldp._validation import _show, as_counts, check_epsilon, check_int, check_probability
from pldp.domain import Domain
from pldp.errors import BudgetError, ParameterError

__all__ = ["ItemBudgets", "PrivacyLevel"]


@dataclass(frozen=True)
class PrivacyLevel:
    """One privacy level: a budget and the indices of the items that carry it."""

    epsilon: float
    items: np.ndarray

    def __len__(self) -> int:
        return int(self.items.size)


class ItemBudgets:
    """One privacy budget per item; ``inf`` marks a non-sensitive item.

    Parameters
    ----------
    epsilons : array_like of float or None
        Budget of each item in index order. ``None``, ``inf`` or ``numpy.inf`` marks a
        non-sensitive item; every other entry must be a finite number > 0.
    domain : Domain, optional
        Labels of the items. Defaults to ``Domain.range(len(epsilons))``.

    Raises
    ------
    BudgetError
        On NaN, zero, negative or non-numeric budgets (naming the items), or a domain of
        another length.

    Examples
    --------
    The setting of Fig. 1 of Li et al.: three sensitive items and two non-sensitive ones.

    >>> b = ItemBudgets.from_mapping({"HIV": 0.1, "Cancer": 0.5, "Hepatitis": 1.0,
    ...                               "Flu": None, "None": None})
    >>> b.sensitive.tolist()
    [True, True, True, False, False]
    >>> [(lv.epsilon, lv.items.tolist()) for lv in b.levels]
    [(0.1, [0]), (0.5, [1]), (1.0, [2])]
    """

    __slots__ = ("_domain", "_eps")

    def __init__(self, epsilons: Any, domain: Domain | None = None) -> None:
        if isinstance(epsilons, np.ndarray) and epsilons.ndim == 1 and epsilons.dtype.kind in "fiu" and epsilons.size:
            self._init_numeric(epsilons.astype(float), domain)  # vectorised fast path
            return
        raw = list(epsilons.tolist() if isinstance(epsilons, np.ndarray) else epsilons)
        if not raw:
            raise BudgetError("budgets need at least one item")
        eps = np.empty(len(raw), dtype=float)
        bad = []
        for i, e in enumerate(raw):
            if e is None:
                eps[i] = math.inf
                continue
            if isinstance(e, (bool, np.bool_)) or not isinstance(e, numbers.Real):
                bad.append((i, e))  # no strings, no booleans: a budget is a number
                continue
            v = float(e)
            if math.isnan(v) or v <= 0.0 or v == -math.inf:
                bad.append((i, e))
            eps[i] = v
        if domain is None:
            domain = Domain.range(len(raw))
        if bad:
            names = [f"{domain.labels[i]!r}: {e!r}" for i, e in bad] if len(domain) == len(raw) else bad
            raise BudgetError(f"budgets must be > 0 (or None/inf for non-sensitive items); bad: {_show(names)}")
        if len(domain) != len(raw):
            raise BudgetError(f"domain has {len(domain)} labels but {len(raw)} budgets were given")
        eps.setflags(write=False)
        self._eps = eps
        self._domain = domain

    def _init_numeric(self, eps: np.ndarray, domain: Domain | None) -> None:
        if domain is None:
            domain = Domain.range(eps.size)
        bad = np.isnan(eps) | (eps <= 0)
        if bad.any():
            idx = np.flatnonzero(bad)
            names = [f"{domain.labels[i]!r}: {eps[i]!r}" for i in idx[:5]] if len(domain) == eps.size else idx.tolist()
            raise BudgetError(f"budgets must be > 0 (or None/inf for non-sensitive items); bad: {_show(names)}")
        if len(domain) != eps.size:
            raise BudgetError(f"domain has {len(domain)} labels but {eps.size} budgets were given")
        eps.setflags(write=False)
        self._eps = eps
        self._domain = domain

    # ----------------------------------------------------------------- constructors
    @classmethod
    def from_array(cls, epsilons: Any, domain: Domain | None = None) -> ItemBudgets:
        """Budgets from an array in index order (``inf`` = non-sensitive)."""
        return cls(epsilons, domain)

    @classmethod
    def one_sensitive_budget(
        cls, epsilon: float, sensitive: Any, domain: Domain | None = None, hint: str = ""
    ) -> ItemBudgets:
        """``epsilon`` on the items of the boolean mask ``sensitive``, ``inf`` elsewhere (ULDP's
        budgets: :class:`~pldp.URR`, :class:`~pldp.URAP`); a :class:`~pldp.errors.ParameterError`
        (with ``hint`` after "mask") unless ``sensitive`` is a 1-D boolean mask."""
        mask = np.asarray(sensitive)
        if mask.ndim != 1 or mask.dtype != bool:
            raise ParameterError(
                f"sensitive must be a 1-D boolean mask{hint}, got dtype {mask.dtype} and shape {mask.shape}"
            )
        return cls(np.where(mask, epsilon, math.inf), domain)

    @classmethod
    def from_mapping(
        cls,
        mapping: Mapping[Hashable, float | None],
        domain: Domain | Sequence[Hashable] | None = None,
    ) -> ItemBudgets:
        """Budgets from ``{label: epsilon or None}``.

        Without ``domain`` the mapping's keys, in order, form the domain. With ``domain``
        every label must appear in the mapping and every key must be a label.
        """
        if domain is None:
            domain = Domain(mapping.keys())
        elif not isinstance(domain, Domain):
            domain = Domain(domain)
        extra = [k for k in mapping if k not in domain]
        if extra:
            raise BudgetError(f"budget given for labels not in the domain: {_show(extra)}")
        missing = [lab for lab in domain if lab not in mapping]
        if missing:
            raise BudgetError(f"no budget given for labels: {_show(missing)}")
        return cls([mapping[lab] for lab in domain], domain)

    @classmethod
    def uniform(cls, epsilon: float, d: int | Domain) -> ItemBudgets:
        """The same budget for every item (plain epsilon-LDP)."""
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 1))
        return cls(np.full(len(dom), check_epsilon(epsilon)), dom)

    @classmethod
    def by_frequency(
        cls,
        counts: Any,
        eps_min: float,
        eps_max: float,
        levels: int,
        non_sensitive_ratio: float,
        domain: Domain | None = None,
    ) -> ItemBudgets:
        """The budget policy of the IPRR experiments (Li et al., Sec. 7.1).

        Items are ranked by count, largest first. The first
        ``floor(non_sensitive_ratio * d)`` items are non-sensitive. The remaining
        :math:`|D_S|` items are split, in rank order, into ``levels`` consecutive groups;
        group :math:`j = 0, \\dots, LC-1` gets budget
        :math:`\\varepsilon_{max} - j (\\varepsilon_{max} - \\varepsilon_{min}) / (LC - 1)`,
        so items with smaller counts get smaller budgets (stronger protection).

        Uneven splits and ties:

        * When ``levels`` does not divide :math:`|D_S|`, group sizes differ by at most one
          and the *larger* groups are the most private ones (the extra items go to the
          smallest budgets): the conservative choice.
        * Equal counts are ranked by item index (lower index ranks as larger), so the result
          is deterministic.
        * ``levels = 1`` gives every sensitive item ``eps_min``.

        Parameters
        ----------
        counts : array_like of int
            Number of users holding each item.
        eps_min, eps_max : float
            Smallest and largest budget, ``0 < eps_min <= eps_max``.
        levels : int
            Level count ``LC >= 1``.
        non_sensitive_ratio : float
            ``NR`` in [0, 1): the fraction of items, taken from the most frequent, that are
            non-sensitive.
        domain : Domain, optional
            Item labels.

        Raises
        ------
        BudgetError
            If fewer sensitive items remain than levels (the paper caps NR for this reason).

        Examples
        --------
        The worked example of Sec. 7.1:

        >>> b = ItemBudgets.by_frequency([6, 5, 4, 3, 2, 1], 0.1, 0.3, 3, 0.5,
        ...                              domain=Domain("ABCDEF"))
        >>> b.epsilons.tolist()
        [inf, inf, inf, 0.3, 0.2, 0.1]
        """
        c = as_counts(counts, "counts")
        d = c.size
        lo, hi = check_epsilon(eps_min, "eps_min"), check_epsilon(eps_max, "eps_max")
        if lo > hi:
            raise ParameterError(f"eps_min must be <= eps_max, got {eps_min!r} > {eps_max!r}")
        lc = check_int(levels, "levels", 1)
        nr = check_probability(non_sensitive_ratio, "non_sensitive_ratio")
        if nr >= 1.0:
            raise ParameterError("non_sensitive_ratio must be < 1: at least one item must stay sensitive")
        n_ns = math.floor(nr * d + 1e-9)
        n_s = d - n_ns
        if n_s < lc:
            raise BudgetError(f"{n_s} sensitive item(s) left by non_sensitive_ratio={nr} cannot fill {lc} levels")
        order = np.lexsort((np.arange(d), -c))  # by count descending, ties by index
        eps = np.full(d, math.inf)
        sens = order[n_ns:]
        budgets = np.linspace(hi, lo, lc) if lc > 1 else np.array([lo])
        base, extra = divmod(n_s, lc)
        sizes = np.full(lc, base)
        sizes[lc - extra :] += 1  # the extra items go to the most private levels
        eps[sens] = np.repeat(budgets, sizes)
        return cls(eps, domain)

    @classmethod
    def random_levels(
        cls,
        d: int | Domain,
        epsilon: float,
        rng: np.random.Generator,
        multipliers: Sequence[float] = (1.0, 1.2, 2.0),
        shares: Sequence[float] = (0.05, 0.05, 0.90),
        exact_shares: bool = False,
    ) -> ItemBudgets:
        """The budget policy of the IDUE experiments (Gu et al., Sec. VI).

        Each item independently draws its budget from
        ``{m * epsilon for m in multipliers}`` with probabilities ``shares`` (default
        :math:`\\{\\varepsilon, 1.2\\varepsilon, 2\\varepsilon\\}` with
        :math:`\\{5\\%, 5\\%, 90\\%\\}`). With ``exact_shares=True`` the level sizes are
        instead ``round(share * d)`` (largest remainders), assigned to a random permutation.
        """
        dom = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 1))
        eps = check_epsilon(epsilon)
        mult = np.asarray(multipliers, dtype=float)
        sh = np.asarray(shares, dtype=float)
        if mult.ndim != 1 or mult.size == 0 or mult.shape != sh.shape:
            raise ParameterError("multipliers and shares must be non-empty vectors of equal length")
        if not np.all(np.isfinite(mult)) or np.any(mult <= 0):
            raise ParameterError(f"multipliers must be finite and > 0, got {mult.tolist()}")
        if np.any(sh < 0) or not np.isfinite(sh).all() or abs(sh.sum() - 1.0) > 1e-9:
            raise ParameterError(f"shares must be non-negative and sum to 1, got {sh.tolist()}")
        n = len(dom)
        if exact_shares:
            raw = sh * n
            sizes = np.floor(raw).astype(int)
            rem = n - sizes.sum()
            sizes[np.argsort(-(raw - sizes), kind="stable")[:rem]] += 1
            which = rng.permutation(np.repeat(np.arange(mult.size), sizes))
        else:
            which = rng.choice(mult.size, size=n, p=sh)
        return cls(eps * mult[which], dom)

    # ------------------------------------------------------------------- accessors
    @property
    def epsilons(self) -> np.ndarray:
        """Read-only array of budgets in index order (``inf`` = non-sensitive)."""
        return self._eps

    @property
    def domain(self) -> Domain:
        """The item labels."""
        return self._domain

    @property
    def d(self) -> int:
        """Domain size :math:`|D|`."""
        return int(self._eps.size)

    def __len__(self) -> int:
        return self.d

    @property
    def sensitive(self) -> np.ndarray:
        """Boolean mask of sensitive items (:math:`D_S`)."""
        return np.isfinite(self._eps)

    @property
    def non_sensitive(self) -> np.ndarray:
        """Boolean mask of non-sensitive items (:math:`D_N`)."""
        return ~np.isfinite(self._eps)

    @property
    def n_sensitive(self) -> int:
        """:math:`|D_S|`."""
        return int(self.sensitive.sum())

    @property
    def min_epsilon(self) -> float:
        """Smallest budget over the sensitive items (``inf`` if there are none)."""
        s = self._eps[self.sensitive]
        return float(s.min()) if s.size else math.inf

    @property
    def max_epsilon(self) -> float:
        """Largest budget over the sensitive items (``inf`` if there are none)."""
        s = self._eps[self.sensitive]
        return float(s.max()) if s.size else math.inf

    @property
    def levels(self) -> list[PrivacyLevel]:
        """The distinct finite budgets, ascending, each with the indices of its items."""
        sens = np.flatnonzero(self.sensitive)
        values, inverse = np.unique(self._eps[sens], return_inverse=True)
        return [PrivacyLevel(float(v), sens[inverse == k]) for k, v in enumerate(values)]

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, ItemBudgets) and self._domain == other._domain and np.array_equal(self._eps, other._eps)
        )

    def __hash__(self) -> int:
        return hash((self._domain, self._eps.tobytes()))

    def __repr__(self) -> str:
        levels = self.levels
        lv = ", ".join(f"{lv.epsilon:g}x{len(lv)}" for lv in levels[:6])
        if len(levels) > 6:
            lv += f", ... ({len(levels) - 6} more)"
        return f"ItemBudgets(d={self.d}, levels=[{lv}], non_sensitive={self.d - self.n_sensitive})"
