"""The attacker who knows the estimator: ``strategy="optimal"`` of :func:`pldp.attacks.fake_reports`.

The fixed strategies (:mod:`pldp.attacks.pure`, :mod:`pldp.attacks.leveled`) do not look at the
estimator; a defence measured only against them can be beaten by an attacker who knows it. This
attacker knows the protocol, the estimation method and its options (nothing secret: the capped
weights, the Huber step, the detection threshold are all public), and searches how to spend its
``m`` fakes so that the named estimator (``defence=``) moves the targets most.

**What it chooses.** Its fakes are split over *atoms*: for the user-level protocols (RCF, APLDP,
LLevels, PBP, PPDA, PLDP-FEBSF) the claimed levels (``"level i"``: every fake reports MGA-style at
its level, as ``strategy="level"``, the target bits and the honest expected number of ones) and,
at each level whose reports are unary, ``"level i alone"``: the target bits and nothing else, the
fewest ones a report can have (it lowers every other item, which moves a projection's threshold
and an estimate whose denominator counts ones). For a single mechanism the report strategies
``"mga"``, ``"adaptive"``, ``"knows_defence"`` and ``"alone"`` (for unary reports: every target
bit and the honest expected number of ones, honest ones counts, the non-targets near their honest
rate, or the target bits alone; for direct encoding ``"mga"`` and ``"knows_defence"``); for MPLDP
the (attribute, level) pairs ``"a{i} level {tau}"``: a fake claims a level on every attribute, so
its split is a table whose every row holds all ``m`` fakes, searched attribute by attribute
(:mod:`pldp.attacks.across`; ``Search.counts`` is the table, flat). Padding-and-sampling is not
searched (ParameterError).

**Shadow tallies.** The attacker draws its own honest data from its ``rng``: ``population`` honest
users (default ``99 m``: :math:`\\beta = 1\\%`), spread over the levels by ``shares`` (default the
protocol's public shares, else uniform) and uniformly over the items, simulated at count level
(``oracle.simulate``) ``shadows`` times (default 4). ``m`` is cut into ``chunks`` equal parts
(default 20; sizes differ by at most one) and, for every chunk and atom, one tally of that chunk's
fakes claiming that atom is drawn once. The objective of a split (an atom per chunk) is the mean
over the shadows of the gain of the targets under ``defence`` (:func:`pldp.attacks.gain` on the
shadow's honest tally and the split's fake tally).

**The search.** (1) Greedy: chunk by chunk, each chunk goes to the atom that raises the objective
most given the chunks placed so far. (2) Local moves: for each chunk in
turn, move it to the atom that raises the objective of the whole split, until a pass changes
nothing (at most ``passes``, default 1). (3) The fixed strategies' splits at chunk resolution
(every fake on one atom; even over the atoms; for the levelled protocols ``knows_defence``'s and
the honest shares') are evaluated on the same shadows, and the best of all is returned: the
attacker never does worse, on its own objective, than any fixed strategy. With ``spread=False``
only the splits with every fake on one atom are considered (the threat model of a one-level
bound, :func:`pldp.estimation.robust.attack_bound`).

**Cost.** ``chunks x atoms`` fake tallies drawn, and about ``(1 + passes) x chunks x atoms +
atoms + 3`` evaluations of ``shadows`` estimates each (ten levels, 20 chunks, 4 shadows: about
2,500 estimates, 1-3 s for RCF's ``"robust"`` at ``d = 16``). Vectorised per tally (count-level
simulation, tallies merged by addition); the loops are over chunks and atoms only. Deterministic
given ``rng``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pldp.attacks.atoms import across_attributes, atoms_of, is_levelled, level_split, padded_split
from pldp.attacks.base import Attack, Rule, rule_of
from pldp.attacks.climb import climb
from pldp.errors import ParameterError

__all__ = [
    "CHUNKS",
    "PASSES",
    "SHADOWS",
    "Search",
    "Worst",
    "at_targets",
    "search",
    "split_expected_gain",
    "split_reports",
    "worst_case",
]

#: Parts ``m`` is cut into.
CHUNKS = 20
#: Shadow honest tallies the objective is averaged over.
SHADOWS = 4
#: Most passes of local moves after the greedy split.
PASSES = 1


@dataclass(frozen=True)
class Search:
    """What :func:`search` found.

    Attributes
    ----------
    atoms : tuple of str
        What the fakes may claim or do: ``"level 0"``, ... for the levelled protocols, report
        strategies for a single mechanism.
    counts : ndarray of int
        Fakes per atom (summing to ``m``).
    objective : float
        The mean gain of ``counts`` over the attacker's shadow tallies.
    fixed : dict
        The objective of each fixed strategy's split on the same shadows (``"mga"``, ``"level i"``
        or a report strategy, ``"knows_defence"``, ``"shares"``).
    how : str
        Which part of the search gave ``counts``: ``"greedy"``, ``"moves"`` or a key of ``fixed``.
    evaluations : int
        Splits evaluated (each on every shadow).
    """

    atoms: tuple[str, ...]
    counts: np.ndarray
    objective: float
    fixed: dict[str, float] = field(default_factory=dict)
    how: str = "greedy"
    evaluations: int = 0


def _chunks(m: int, chunks: int) -> np.ndarray:
    c = max(1, min(int(chunks), m)) if m else 1
    return np.full(c, m // c, dtype=np.int64) + (np.arange(c) < m % c)


def _part(oracle: Any, targets: Any, atom: str, m: int, rng: np.random.Generator) -> Any:
    """``m`` fake reports of one atom."""
    rule = rule_of(oracle)
    if atom.endswith(" alone"):
        atoms = atoms_of(oracle)
        counts = np.zeros(len(atoms), dtype=np.int64)
        counts[atoms.index(atom)] = m
        chosen = rule.promoted(oracle, targets, "mga")
        return rule.reports(oracle, Attack(chosen, "optimal", split=level_split(oracle, counts)), m, rng)
    if atom.startswith("level "):
        return rule.fixed_reports(oracle, targets, "level", m, rng, int(atom[6:]))
    if atom == "alone":  # a single unary mechanism: a report rule, not one of the fixed strategies
        return rule.reports(oracle, Attack(rule.promoted(oracle, targets, "mga"), "alone"), m, rng)
    return rule.fixed_reports(oracle, targets, atom, m, rng)


def _honest_data(oracle: Any, population: int, shares: np.ndarray | None) -> Any:
    """Expected counts of ``population`` users, uniform over the items (and over ``shares``)."""
    from pldp.attacks.leveled import largest_remainder

    d = oracle.d
    if shares is None:
        return largest_remainder(np.ones(d), population)
    per_level = largest_remainder(np.asarray(shares, dtype=float), population)
    return np.stack([largest_remainder(np.ones(d), int(n)) for n in per_level])


def _shares(oracle: Any, shares: Any) -> np.ndarray | None:
    if not is_levelled(oracle):
        return None
    rule: Any = rule_of(oracle)
    return rule.shares(oracle, Attack(np.empty(0, dtype=np.int64), "mga", shares=shares), oracle.t)


class _Objective:
    """The shadow tallies and the chunks' fake tallies; :meth:`value` of a split."""

    def __init__(
        self,
        oracle: Any,
        targets: Any,
        m: int,
        rng: np.random.Generator,
        method: str,
        options: dict[str, Any],
        population: int,
        shares: np.ndarray | None,
        chunks: int,
        shadows: int,
        versus: str | None = None,
    ) -> None:
        self.oracle, self.method, self.options, self.versus = oracle, method, options, versus
        self.rule: Rule = rule_of(oracle)
        self.targets = self.rule.promoted(oracle, targets, "mga")
        self.atoms = atoms_of(oracle)
        self.sizes = _chunks(m, chunks)
        data = _honest_data(oracle, population, shares)
        self.honest = [oracle.simulate(data, rng) for _ in range(int(shadows))]
        self.before = np.array([self._at_targets(h) for h in self.honest])
        self.fakes = [[oracle.tally(_part(oracle, targets, a, int(c), rng)) for a in self.atoms] for c in self.sizes]
        self.evaluations = 0

    def _at_targets(self, tally: Any) -> float:
        return at_targets(self.oracle, self.rule, tally, self.targets, self.method, self.options, self.versus)

    def fake(self, assign: list[int], skip: int = -1) -> Any:
        """The fake tally of the chunks ``0..len(assign)-1`` sent to atoms ``assign`` (but ``skip``)."""
        parts = [self.fakes[j][a] for j, a in enumerate(assign) if j != skip]
        total = parts[0] if parts else None
        for p in parts[1:]:
            total = total + p
        return total

    def of(self, fake: Any) -> float:
        """Mean shadow gain of a fake tally."""
        if fake is None:
            return 0.0
        self.evaluations += 1
        after = np.array([self._at_targets(h + fake) for h in self.honest])
        return float(np.mean(after - self.before))

    def plus(self, base: Any, j: int, atom: int) -> float:
        """Mean shadow gain of ``base`` and chunk ``j`` on ``atom``."""
        chunk = self.fakes[j][atom]
        return self.of(chunk if base is None else base + chunk)

    def value(self, assign: list[int]) -> float:
        """Mean shadow gain of the chunks ``0..len(assign)-1`` sent to atoms ``assign``."""
        return self.of(self.fake(assign))

    def counts(self, assign: list[int]) -> np.ndarray:
        return np.bincount(
            np.asarray(assign, dtype=np.int64), weights=self.sizes[: len(assign)], minlength=len(self.atoms)
        ).astype(np.int64)

    def assignment(self, weights: np.ndarray) -> list[int]:
        """Chunks given to atoms in proportion to ``weights`` (largest remainders), in atom order."""
        from pldp.attacks.leveled import largest_remainder

        per = largest_remainder(np.asarray(weights, dtype=float), self.sizes.size)
        return [int(a) for a in np.repeat(np.arange(len(self.atoms)), per)]


def at_targets(
    oracle: Any, rule: Rule, tally: Any, targets: Any, method: str, options: dict[str, Any], versus: str | None
) -> float:
    """The targets' total estimate under ``method``, less that under ``versus`` (with the same
    ``options``, those ``versus`` takes) when one is given: the objective's value of one tally."""
    value = rule.total(rule.frequencies(oracle, tally, method, options), targets)
    if versus is not None:
        value -= rule.total(rule.frequencies(oracle, tally, versus, {}), targets)
    return value


def _fixed(obj: _Objective, oracle: Any, targets: Any, shares: np.ndarray | None, spread: bool) -> dict[str, list[int]]:
    """The fixed strategies' splits at chunk resolution."""
    a = len(obj.atoms)
    out = {obj.atoms[i]: obj.assignment(np.eye(a)[i]) for i in range(a)}
    if not spread:
        return out
    if shares is None:
        out["even"] = obj.assignment(np.ones(a))
        return out
    from pldp.attacks.leveled import claim_counts

    def levels(weights: np.ndarray) -> list[int]:  # the claimed levels' atoms only (not "alone")
        return obj.assignment(np.concatenate([np.asarray(weights, dtype=float), np.zeros(a - weights.size)]))

    out["mga"] = levels(np.ones(shares.size))
    out["shares"] = levels(shares)
    kd = Attack(obj.targets, "knows_defence", shares=shares)
    out["knows_defence"] = levels(np.asarray(claim_counts(oracle.mechanisms, kd, 1_000_000, shares), dtype=float))
    return out


def search(
    oracle: Any,
    targets: Any,
    m: int,
    *,
    rng: np.random.Generator,
    defence: str = "unbiased",
    options: dict[str, Any] | None = None,
    population: int | None = None,
    shares: Any = None,
    chunks: int = CHUNKS,
    shadows: int = SHADOWS,
    passes: int = PASSES,
    spread: bool = True,
    versus: str | None = None,
) -> Search:
    """The split of ``m`` fakes over the atoms that moves ``targets`` most under ``defence``
    (module docstring: greedy by chunks, local moves, the fixed strategies compared).

    Parameters
    ----------
    oracle : FrequencyOracle
        A single mechanism (not padding-and-sampling), a levelled protocol or MPLDP.
    targets : array_like of int
    m : int
        Fakes (``>= 1``).
    rng : numpy.random.Generator
        The attacker's own: shadow tallies and chunk tallies are drawn from it.
    defence : str
        The estimation method attacked; ``options`` go to ``oracle.estimate`` (e.g. ``cap``, ``k``).
    population : int, optional
        Honest users the attacker assumes (default ``99 m``).
    shares : array_like, optional
        Honest level shares the attacker assumes (levelled protocols; default the protocol's).
    chunks, shadows, passes : int
        Resolution of the split, shadow tallies, most passes of local moves.
    spread : bool
        False: only splits with every fake on one atom (a one-level threat model).
    versus : str, optional
        Another method: the objective is then the gain under ``defence`` *less* the gain under
        ``versus`` of the same reports (the attacker who makes a defence look worst next to the
        estimate it replaces; ``info["margin"]`` of :func:`pldp.estimation.spread.spread_robust`).
        Not searched across MPLDP's attributes (ParameterError).

    Examples
    --------
    >>> import numpy as np
    >>> from pldp.protocols import RCF
    >>> rcf = RCF([0.5, 1.0, 2.0], 8)
    >>> s = search(rcf, [7], 300, rng=np.random.default_rng(0), defence="unbiased", chunks=6, shadows=2)
    >>> s.atoms, s.counts.tolist()
    (('level 0', 'level 1', 'level 2'), [0, 0, 300])
    """
    m = int(m)
    if m < 1:
        raise ParameterError(f"the optimal attacker needs m >= 1 fakes, got {m}")
    offered = tuple(getattr(oracle, "methods", ()))  # none to check against for a stand-in oracle
    for what, method in (("defence", defence), ("versus", versus)):
        if offered and method is not None and method not in offered:
            name = type(oracle).__name__
            raise ParameterError(f"{what} {method!r} is not an estimation method of {name}; choose one of {offered}")
    pop = int(population) if population is not None else 99 * m
    if across_attributes(oracle):
        if versus is not None:
            raise ParameterError("versus= is not searched across MPLDP's attributes: attack one attribute")
        from pldp.attacks.across import search_attributes

        found = search_attributes(
            oracle, targets, m, rng=rng, defence=defence, options=dict(options or {}), population=pop,
            shares=shares, chunks=chunks, shadows=shadows, passes=passes, spread=spread,
        )  # fmt: skip
        how = found.how[0] if len(set(found.how)) == 1 else "; ".join(f"a{i} {h}" for i, h in enumerate(found.how))
        return Search(atoms_of(oracle), found.counts.reshape(-1), found.objective, found.fixed, how, found.evaluations)
    sh = _shares(oracle, shares)
    obj = _Objective(oracle, targets, m, rng, defence, dict(options or {}), pop, sh, chunks, shadows, versus)
    a = len(obj.atoms)
    fixed_splits = _fixed(obj, oracle, targets, sh, spread)
    fixed = {name: obj.value(assign) for name, assign in fixed_splits.items()}
    best_name = max(fixed, key=lambda k: fixed[k])
    best, best_value, how = fixed_splits[best_name], fixed[best_name], best_name
    if spread and a > 1:
        best, best_value, how = climb(obj, a, best, best_value, how, passes)
    counts = obj.counts(best)
    return Search(obj.atoms, counts, best_value, fixed, how, obj.evaluations)


def split_reports(oracle: Any, targets: Any, counts: Any, rng: np.random.Generator) -> Any:
    """The fake reports of a split (``counts[i]`` fakes on atom ``i`` of :func:`atoms_of`), in
    ``oracle.perturb``'s format: for the levelled protocols the claims of ``counts`` in random
    order (:class:`pldp.attacks.Attack` with ``split``), for a single mechanism each report
    strategy's rows, shuffled."""
    atoms = atoms_of(oracle)
    c = padded_split(oracle, np.asarray(counts))
    if across_attributes(oracle):
        from pldp.attacks.leveled import split_rows

        rows = split_rows(oracle, c)
        chosen = rule_of(oracle).promoted(oracle, targets, "mga")
        return rule_of(oracle).reports(oracle, Attack(chosen, "optimal", split=rows), int(rows[0].sum()), rng)
    if c.shape != (len(atoms),) or c.dtype.kind not in "iu" or np.any(c < 0):
        raise ParameterError(f"split must be {len(atoms)} non-negative fake counts, one per atom {atoms}")
    rule = rule_of(oracle)
    if is_levelled(oracle):
        chosen = rule.promoted(oracle, targets, "mga")
        return rule.reports(oracle, Attack(chosen, "optimal", split=level_split(oracle, c)), int(c.sum()), rng)
    parts = [_part(oracle, targets, atom, int(k), rng) for atom, k in zip(atoms, c, strict=True)]
    rows = np.concatenate([np.asarray(p) for p in parts], axis=0)
    return rows[rng.permutation(rows.shape[0])]


def split_expected_gain(oracle: Any, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
    """The expected ``"unbiased"`` gain of the fixed split ``attack.split``: the family's closed form
    with those claims (levelled protocols), or for a single mechanism the closed form of the mixture
    of the report strategies (the gain is linear in the fakes' support)."""
    rule: Any = rule_of(oracle)
    split = padded_split(oracle, np.asarray(attack.split, dtype=np.int64))
    if is_levelled(oracle) and split.ndim == 1 and split.size == len(atoms_of(oracle)):
        split = level_split(oracle, split)
    if is_levelled(oracle) or across_attributes(oracle):
        return rule.expected_gain(oracle, Attack(attack.targets, "optimal", split=split), m, data)
    if not m:
        return 0.0
    total = 0.0
    for atom, k in zip(atoms_of(oracle), split, strict=True):
        if k:
            part = rule.expected_gain(oracle, Attack(attack.targets, atom), m, data)  # "alone" too
            total += float(k) / m * float(part)
    return total


@dataclass(frozen=True)
class Worst:
    """What :func:`worst_case` measured.

    Attributes
    ----------
    search : Search
        The attacker's split and its objective on its own shadow tallies.
    gains : ndarray
        The gain of that split under ``defence`` on each fresh honest tally (fresh fakes too).
    gain, se : float
        Their mean and its standard error.
    """

    search: Search
    gains: np.ndarray
    gain: float
    se: float


def worst_case(
    oracle: Any,
    targets: Any,
    m: int,
    *data: Any,
    rng: np.random.Generator,
    defence: str = "unbiased",
    repeats: int = 10,
    **search_options: Any,
) -> Worst:
    """The worst case of ``defence`` measured by the optimising attacker: :func:`search` on the
    attacker's shadow tallies (``search_options``; with ``versus=`` the gain less that of
    ``versus`` on the same reports), then the gain of the split it found measured
    on ``repeats`` fresh honest tallies of ``data`` (what ``oracle.simulate`` takes), with fresh
    fake reports, all from ``rng``. The gain is an unbiased measurement of that split; the split
    is a lower bound of the best split (a greedy search), so the worst case is at least this.

    Examples
    --------
    >>> import numpy as np
    >>> from pldp.protocols import RCF
    >>> rcf = RCF([0.5, 1.0, 2.0], 8)
    >>> cells = np.full((3, 8), 1000)
    >>> w = worst_case(rcf, [7], 240, cells, rng=np.random.default_rng(0), repeats=3, chunks=4, shadows=2)
    >>> w.search.counts.tolist(), w.gains.shape
    ([0, 0, 240], (3,))
    """
    s = search(oracle, targets, m, rng=rng, defence=defence, **search_options)
    options = dict(search_options.get("options") or {})
    versus = search_options.get("versus")
    rule = rule_of(oracle)
    chosen = rule.promoted(oracle, targets, "mga")
    gains = []
    for _ in range(int(repeats)):
        honest = oracle.simulate(*data, rng)
        fake = oracle.tally(split_reports(oracle, targets, s.counts, rng))
        if versus is None:
            gains.append(rule.gain(oracle, honest, fake, targets, defence, options))
        else:
            after = at_targets(oracle, rule, honest + fake, chosen, defence, options, versus)
            gains.append(after - at_targets(oracle, rule, honest, chosen, defence, options, versus))
    out = np.array(gains)
    se = float(out.std(ddof=1) / np.sqrt(out.size)) if out.size > 1 else float("nan")
    return Worst(s, out, float(out.mean()), se)
