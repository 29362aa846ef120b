"""The optimising attacker across MPLDP's attributes (what :func:`pldp.attacks.optimal.search` runs
for :class:`~pldp.protocols.MPLDP`).

A fake MPLDP user sends a claimed level and a basic-RAPPOR report on *every* attribute, so its
split is a table: ``counts[i, 0, tau]`` fakes claim level ``tau`` on attribute ``i`` with an
MGA-style report there (the target bits and the honest expected number of other ones; atoms
``"a{i} level {tau}"``), ``counts[i, 1, tau]`` with the target bits alone (the fewest ones a report
can have: they raise no other value's count, which a normalised estimate rewards; atoms ``"a{i}
level {tau} alone"``), every attribute holding all ``m`` fakes. The estimators of MPLDP estimate each
attribute from that attribute's level counts alone, so the gain of a split is the sum over the
attacked attributes of a gain that depends on that attribute's row only: the best table is the
best row of each attribute, searched one attribute at a time (exactly, no loss from separating
them). Per attacked attribute the search is that of :mod:`pldp.attacks.optimal`: ``m`` cut into
``chunks`` parts, greedy chunk by chunk over the atoms, ``passes`` of single-chunk moves, and the
fixed strategies' rows (each single level, even, the shares, ``knows_defence``) compared on the
same shadow tallies. An attribute not attacked (empty targets) gets the claims of the honest
shares (largest remainders) and honest reports of a uniform value.

**Shadow tallies.** ``population`` honest users, per attribute spread over the levels by the
shares (largest remainders, independent of the value) and uniformly over the values, simulated
``shadows`` times at count level; per chunk, attacked attribute and atom one tally of that
chunk's fakes there (the fakes' other attributes do not enter that attribute's estimate).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pldp.attacks.base import Attack, rule_of
from pldp.attacks.climb import climb
from pldp.attacks.leveled import claim_counts, largest_remainder

__all__ = ["AttributesSearch", "atom_names", "search_attributes"]


def atom_names(mp: Any) -> tuple[str, ...]:
    """Attribute by attribute: ``"a{i} level {tau}"`` for every level, then ``"a{i} level {tau} alone"``
    (the order of :func:`pldp.attacks.leveled.split_rows`'s table, flat)."""
    levels = range(mp.n_levels)
    return tuple(
        name
        for i in range(mp.n_attributes)
        for name in [f"a{i} level {t}" for t in levels] + [f"a{i} level {t} alone" for t in levels]
    )


@dataclass(frozen=True)
class AttributesSearch:
    """What :func:`search_attributes` found (wrapped in :class:`pldp.attacks.optimal.Search`).

    ``counts`` is the ``(l, 2, levels)`` table (:func:`pldp.attacks.leveled.split_rows`);
    ``parts[i]`` attribute ``i``'s share of ``objective`` (0 for an attribute not attacked); ``how`` per attribute."""

    counts: np.ndarray
    objective: float
    parts: np.ndarray
    fixed: dict[str, float] = field(default_factory=dict)
    how: tuple[str, ...] = ()
    evaluations: int = 0


def _chunks(m: int, chunks: int) -> np.ndarray:
    c = max(1, min(int(chunks), m))
    return np.full(c, m // c, dtype=np.int64) + (np.arange(c) < m % c)


def _honest_users(mp: Any, population: int, shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Values and levels ``(population, l)``: per attribute and level, the values in turn."""
    values = np.empty((population, mp.n_attributes), dtype=np.int64)
    levels = np.empty_like(values)
    per_level = largest_remainder(shares, population)
    for i, k in enumerate(mp.k):
        levels[:, i] = np.repeat(np.arange(mp.n_levels), per_level)
        values[:, i] = np.concatenate([np.arange(int(c)) % k for c in per_level])
    return values, levels


class _Attribute:
    """One attacked attribute: the shadows' estimates before, the chunks' tallies, the gain of a row."""

    def __init__(
        self,
        mp: Any,
        i: int,
        targets: tuple[np.ndarray, ...],
        sizes: np.ndarray,
        honest: list[Any],
        ctx: dict[str, Any],
    ) -> None:
        self.mp, self.i, self.honest, self.ctx = mp, i, honest, ctx
        self.targets = targets[i]
        only = tuple(t if j == i else np.empty(0, dtype=np.int64) for j, t in enumerate(targets))
        rule, rng = rule_of(mp), ctx["rng"]
        self.fakes = [
            [mp.tally(rule.reports(mp, _atom(mp, only, i, a, int(c)), int(c), rng)) for a in range(2 * mp.n_levels)]
            for c in sizes
        ]
        self.before = np.array([self._at_targets(h) for h in honest])
        self.evaluations = 0

    def _at_targets(self, tally: Any) -> float:
        est = self.mp.estimate(tally, self.ctx["method"], attribute=self.i, **self.ctx["options"])
        return float(np.sum(est.frequencies[self.targets]))

    def of(self, fake: Any) -> float:
        if fake is None:
            return 0.0
        self.evaluations += 1
        return float(np.mean([self._at_targets(h + fake) for h in self.honest]) - self.before.mean())

    def fake(self, assign: list[int], skip: int = -1) -> Any:
        total = None
        for j, a in enumerate(assign):
            if j != skip:
                total = self.fakes[j][a] if total is None else total + self.fakes[j][a]
        return total

    def plus(self, base: Any, j: int, level: int) -> float:
        chunk = self.fakes[j][level]
        return self.of(chunk if base is None else base + chunk)

    def search(
        self, fixed: dict[str, list[int]], spread: bool, passes: int
    ) -> tuple[list[int], float, str, dict[str, float]]:
        values = {name: self.of(self.fake(assign)) for name, assign in fixed.items()}
        name = max(values, key=lambda k: values[k])
        best, best_value, how = fixed[name], values[name], name
        if not spread:
            return best, best_value, how, values
        best, best_value, how = climb(self, 2 * self.mp.n_levels, best, best_value, how, passes)
        return best, best_value, how, values


def _atom(mp: Any, targets: tuple[np.ndarray, ...], i: int, atom: int, c: int) -> Attack:
    """``c`` fakes on attribute ``i``'s atom ``atom`` (a level, then the levels alone), level 0 elsewhere."""
    table = np.zeros((mp.n_attributes, 2, mp.n_levels), dtype=np.int64)
    table[:, 0, 0] = c
    table[i, 0, 0] = 0
    table[i, atom // mp.n_levels, atom % mp.n_levels] = c
    return Attack(targets, "optimal", split=table)


def _assignment(weights: np.ndarray, chunks: int) -> list[int]:
    per = largest_remainder(np.asarray(weights, dtype=float), chunks)
    return [int(a) for a in np.repeat(np.arange(weights.size), per)]


def search_attributes(
    mp: Any,
    targets: Any,
    m: int,
    *,
    rng: np.random.Generator,
    defence: str,
    options: dict[str, Any],
    population: int,
    shares: Any,
    chunks: int,
    shadows: int,
    passes: int,
    spread: bool,
) -> AttributesSearch:
    """The split table of ``m`` fake MPLDP users that moves ``targets`` (one array per attribute)
    most under ``defence`` (module docstring); arguments as :func:`pldp.attacks.optimal.search`."""
    rule: Any = rule_of(mp)
    chosen = rule.promoted(mp, targets, "mga")
    t = mp.n_levels
    sh = rule.shares(mp, Attack(chosen, "mga", shares=None if shares is None else np.asarray(shares, float)), t)
    sizes = _chunks(m, chunks)
    values, levels = _honest_users(mp, population, sh)
    honest = [mp.simulate(values, levels, rng) for _ in range(int(shadows))]
    ctx = {"rng": rng, "method": defence, "options": options}
    counts = np.zeros((mp.n_attributes, 2, t), dtype=np.int64)
    counts[:, 0] = largest_remainder(sh, m)
    parts = np.zeros(mp.n_attributes)
    fixed_total: dict[str, float] = {}
    hows, evaluations = [], 0
    for i, tg in enumerate(chosen):
        if not tg.size:
            hows.append("not attacked")
            continue
        attr = _Attribute(mp, i, chosen, sizes, honest, ctx)
        fixed = {f"level {tau}": _assignment(np.eye(t)[tau], sizes.size) for tau in range(t)}
        if spread:
            fixed["mga"] = _assignment(np.ones(t), sizes.size)
            fixed["shares"] = _assignment(sh, sizes.size)
            kd = claim_counts(mp.mechanisms[i], Attack(tg, "knows_defence", shares=sh), 1_000_000, sh)
            fixed["knows_defence"] = _assignment(np.asarray(kd, dtype=float), sizes.size)
        best, value, how, scored = attr.search(fixed, spread, passes)
        for name, v in scored.items():
            fixed_total[name] = fixed_total.get(name, 0.0) + v
        counts[i] = np.bincount(np.asarray(best, dtype=np.int64), weights=sizes, minlength=2 * t).reshape(2, t)
        parts[i], evaluations = value, evaluations + attr.evaluations
        hows.append(how)
    return AttributesSearch(counts, float(parts.sum()), parts, fixed_total, tuple(hows), evaluations)
