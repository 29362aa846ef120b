"""Fake reports of the protocols with user-level budgets: PLDP-FEBSF, RCF, APLDP, PBP, PPDA and
MPLDP (per attribute).

A fake user of these protocols chooses what level to claim, then reports at that level as a fake
user of the level's mechanism does (:mod:`pldp.attacks.pure`). The level claims of each strategy
(``t`` levels; the honest shares are what the attacker assumes, ``shares=``, by default PBP's public
``rho``, MPLDP's ``level_shares``, else uniform):

* ``mga``: the claims spread evenly over the levels (counts differ by at most one, the first
  levels get the remainder), in random order: the plain MGA that does not exploit the levels;
  the reports are ``mga``'s;
* ``min_level``, ``max_level``, ``level``: every fake claims the smallest budget, the largest, or
  ``level=`` (an index into the levels), and reports ``mga``-style at it;
* ``adaptive``: claims drawn from the honest shares (PLDP-FEBSF's level report perturbed by its
  level mechanism, as an honest user's is), ``adaptive`` reports;
* ``input``: as ``adaptive``, with the honest client run on a target;
* ``knows_defence``: :math:`m_l \\propto \\rho_l / S_l` fakes at level :math:`l` (:math:`S_l` the
  move of the targets' level-:math:`l` estimate per fake report), ``adaptive`` reports: every
  level's estimate moves by the same amount, so no combination of the levels (a weighted median,
  capped weights, Huber's clipped mean) can tell the attack from a true change, and the ones
  counts pass detection.

A claimed level is sent in the clear (RCF, APLDP, MPLDP), as PLDP-FEBSF's reported level (not
perturbed: a fake sends what it likes, except under ``adaptive`` and ``input``), or not at all
(PBP, PPDA: the claim then only decides the law the fake report imitates).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from pldp.attacks.base import Attack, Rule, check_targets, rule_for, rule_of
from pldp.attacks.pure import HOW as PURE_HOW
from pldp.attacks.pure import PureRule, UnaryRule, unary_reports, unary_support
from pldp.errors import ParameterError
from pldp.oracle import FrequencyOracle
from pldp.protocols.febsf import FEBSF, FEBSFReports
from pldp.protocols.leveled import HiddenLevels, LeveledProtocol
from pldp.protocols.mpldp import MPLDP, MPLDPReports, oc_weights
from pldp.protocols.rcf import RCF, GroupedReports
from pldp.robustness import combined_gain, support_gain

__all__ = [
    "FEBSFRule",
    "GroupedRule",
    "HiddenRule",
    "LeveledRule",
    "MPLDPRule",
    "alone_counts",
    "claim_counts",
    "claims",
    "largest_remainder",
    "level_reports",
    "level_shift",
    "level_support",
    "level_supports",
    "report_strategy",
    "split_rows",
]

#: The strategy of the fake reports at the claimed level (of the level's mechanism,
#: :mod:`pldp.attacks.pure`), for each strategy (``knows_defence``: see :func:`report_strategy`).
HOW = {
    "mga": "mga",
    "min_level": "mga",
    "max_level": "mga",
    "level": "mga",
    "adaptive": "adaptive",
    "input": "input",
    "knows_defence": "adaptive",
    "optimal": "mga",
}
#: The strategies whose claimed levels look like honest users' (random, from the shares).
HONEST_LOOKING = ("adaptive", "input")


def _mechanism_rule(mech: Any) -> PureRule:
    rule = rule_of(mech)
    if not isinstance(rule, PureRule):  # pragma: no cover - every level mechanism is pure
        raise TypeError(f"{type(mech).__name__} is not a pure mechanism")
    return rule


def report_strategy(attack: Attack) -> str:
    """The strategy of the fake reports at the claimed level: :data:`HOW`'s, and for
    ``knows_defence`` the level mechanism's ``knows_defence`` (non-targets at the honest rate)
    when the defence is ``"recover"``, else ``adaptive`` (honest ones counts)."""
    if attack.strategy == "knows_defence" and attack.defence == "recover":
        return "knows_defence"
    return HOW[attack.strategy]


def level_reports(mech: Any, targets: np.ndarray, m: int, rng: np.random.Generator, strategy: str) -> Any:
    """``m`` fake reports of one level's mechanism by its ``strategy`` (:mod:`pldp.attacks.pure`)."""
    return _mechanism_rule(mech).reports(mech, Attack(targets, strategy), m, rng)


def level_support(mech: Any, targets: np.ndarray, strategy: str) -> np.ndarray:
    """:math:`s_x` of one level's fake reports by its ``strategy``."""
    return _mechanism_rule(mech).support(mech, targets, PURE_HOW[strategy])


def largest_remainder(weights: np.ndarray, m: int) -> np.ndarray:
    """``m`` split in proportion to ``weights`` into integers (largest remainders; ties: first levels)."""
    exact = m * weights / weights.sum()
    counts = np.floor(exact).astype(np.int64)
    order = np.lexsort((np.arange(weights.size), -(exact - counts)))
    counts[order[: m - int(counts.sum())]] += 1
    return counts


def claim_counts(mechanisms: Any, attack: Attack, m: int, shares: np.ndarray) -> np.ndarray:
    """Fake users per claimed level for the strategies whose counts are fixed (module docstring);
    for ``adaptive`` and ``input`` the expected counts ``m * shares`` (floats)."""
    t = len(mechanisms)
    s = attack.strategy
    if s in HONEST_LOOKING:
        return m * shares
    if s == "optimal":
        split = None if attack.split is None else np.asarray(attack.split)
        if split is None or split.shape not in ((t,), (2, t)) or int(split.sum()) != m:
            raise ParameterError(
                f"strategy 'optimal' needs a split of the {m} fakes over the {t} levels (shape ({t},), or "
                f"(2, {t}) with a second row of unary fakes that set the target bits alone)"
            )
        return split.reshape(-1, t).sum(axis=0).astype(np.int64)
    if s == "mga":
        return largest_remainder(np.ones(t), m)
    if s == "knows_defence":
        move = np.array([level_shift(mech, attack.targets, report_strategy(attack)) for mech in mechanisms])
        return largest_remainder(shares / np.maximum(move, 1e-12), m)
    out = np.zeros(t, dtype=np.int64)
    out[{"min_level": 0, "max_level": t - 1}.get(s, attack.level or 0)] = m
    return out


def alone_counts(attack: Attack, mechanisms: Any) -> np.ndarray:
    """Per level, the fakes of an ``"optimal"`` split that set the target bits alone (the second
    row of a ``(2, t)`` split; zeros otherwise). Only unary levels can (else ParameterError)."""
    t = len(mechanisms)
    split = None if attack.strategy != "optimal" or attack.split is None else np.asarray(attack.split)
    if split is None or split.ndim == 1:
        return np.zeros(t, dtype=np.int64)
    alone = split[1].astype(np.int64)
    unary = np.array([isinstance(_mechanism_rule(mech), UnaryRule) for mech in mechanisms])
    if np.any(alone[~unary] > 0):
        raise ParameterError("only fakes of a unary level can set the target bits alone (row 2 of the split)")
    return alone


def level_supports(mechanisms: Any, attack: Attack, counts: np.ndarray) -> list[np.ndarray]:
    """:math:`s_x` of each level's fake reports: the strategy's, mixed with the target bits alone
    in the share of the level's fakes :func:`alone_counts` gives."""
    how = report_strategy(attack)
    alone = alone_counts(attack, mechanisms)
    out = []
    for mech, c, j in zip(mechanisms, counts, alone, strict=True):
        s = level_support(mech, attack.targets, how)
        if j:
            s = ((c - j) * s + j * unary_support(mech, attack.targets, "alone")) / c
        out.append(s)
    return out


def level_shift(mech: Any, targets: np.ndarray, how: str) -> float:
    """:math:`S_l`: the move of the targets' total estimate at this level per fake report, times ``n``."""
    s = level_support(mech, targets, how)
    p, q = mech.support
    return float(np.sum((s[targets] - q[targets]) / (p[targets] - q[targets])))


def claims(mechanisms: Any, attack: Attack, m: int, shares: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The claimed level index of each of ``m`` fakes (module docstring), in random order."""
    if attack.strategy in HONEST_LOOKING:
        return rng.choice(len(mechanisms), size=m, p=shares).astype(np.int64)
    counts = claim_counts(mechanisms, attack, m, shares)
    return rng.permutation(np.repeat(np.arange(len(mechanisms)), counts)).astype(np.int64)


class LeveledRule(Rule):
    """What the user-level protocols share: level claims, shares, reports per claimed level."""

    strategies = tuple(HOW)

    def exact(self, attack: Attack) -> bool:
        """Exact when the claimed levels' counts are fixed (not drawn from the shares)."""
        return attack.strategy not in HONEST_LOOKING

    def check_level(self, oracle: Any, attack: Attack, t: int) -> None:
        """``level=`` is an index into the levels when the strategy is ``"level"`` (and only then)."""
        if attack.strategy == "level":
            if attack.level is None or isinstance(attack.level, bool) or not 0 <= attack.level < t:
                raise ParameterError(f"strategy 'level' needs level= an index in [0, {t}), got {attack.level!r}")

    def shares(self, oracle: Any, attack: Attack, t: int) -> np.ndarray:
        """The honest level shares the attacker assumes (``shares=``, else the protocol's default)."""
        if attack.shares is None:
            return self.default_shares(oracle, t)
        sh = np.asarray(attack.shares, dtype=float).reshape(-1)
        if sh.shape != (t,) or np.any(~np.isfinite(sh)) or np.any(sh < 0) or not math.isclose(sh.sum(), 1.0):
            raise ParameterError(f"shares must be {t} non-negative level shares summing to one")
        return sh

    def default_shares(self, oracle: Any, t: int) -> np.ndarray:
        """Uniform over the levels."""
        return np.full(t, 1.0 / t)

    def per_level(self, mechanisms: Any, attack: Attack, levels: np.ndarray, rng: np.random.Generator) -> list[Any]:
        """The fake reports of each level's claimants, level by level."""
        how = report_strategy(attack)
        alone = alone_counts(attack, mechanisms)
        out = []
        for i, mech in enumerate(mechanisms):
            k, j = int(np.count_nonzero(levels == i)), int(alone[i])
            rows = level_reports(mech, attack.targets, k - j, rng, how)
            if j:
                rows = np.concatenate([rows, unary_reports(mech, attack.targets, j, rng, "alone")])
                rows = rows[rng.permutation(k)]
            out.append(rows)
        return out

    @staticmethod
    def in_user_order(parts: list[Any], levels: np.ndarray) -> np.ndarray:
        """The reports of every level's claimants, put back in the fakes' order."""
        first = np.asarray(parts[0])
        out = np.empty((levels.size, *first.shape[1:]), dtype=np.int64 if first.ndim == 1 else first.dtype)
        for i, part in enumerate(parts):
            out[levels == i] = part
        return out

    def prepare(self, oracle: LeveledProtocol, attack: Attack) -> np.ndarray:
        """Check the level and return the shares."""
        self.check_level(oracle, attack, oracle.t)
        return self.shares(oracle, attack, oracle.t)

    def level_shifts(self, oracle: LeveledProtocol, attack: Attack) -> np.ndarray:
        """``(t, d)``: the standardized support :math:`(s - q)/(p - q)` of a fake report at each level."""
        rows = []
        counts = np.ones(oracle.t)
        if attack.strategy == "optimal" and attack.split is not None:
            counts = np.maximum(np.asarray(attack.split).reshape(-1, oracle.t).sum(axis=0), 1)
        for mech, s in zip(oracle.mechanisms, level_supports(oracle.mechanisms, attack, counts), strict=True):
            s = s[: oracle.d]
            p, q = (v[: oracle.d] for v in mech.support)
            rows.append((s - q) / (p - q))
        return np.array(rows)


@rule_for(RCF)
class GroupedRule(LeveledRule):
    """RCF and APLDP: the level travels in the clear with the report (:class:`GroupedReports`)."""

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> GroupedReports:
        rcf: Any = oracle
        levels = claims(rcf.mechanisms, attack, m, self.prepare(rcf, attack), rng)
        return GroupedReports(tuple(self.per_level(rcf.mechanisms, attack, levels, rng)), levels)

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        """Exact for fixed claims (:func:`pldp.robustness.combined_gain`); at the expected level
        counts for ``adaptive`` and ``input`` (to first order)."""
        rcf: Any = oracle
        cells = np.asarray(data[0], dtype=float)
        n = cells.sum(axis=1)
        fakes = claim_counts(rcf.mechanisms, attack, m, self.prepare(rcf, attack))
        honest = cells / np.where(n > 0, n, 1.0)[:, None]
        return combined_gain(
            rcf.weights(n), rcf.weights(n + fakes), honest, self.level_shifts(rcf, attack), n, fakes, attack.targets
        )


@rule_for(HiddenLevels)
class HiddenRule(LeveledRule):
    """PBP and PPDA: only the report travels; the claimed level decides the law it imitates."""

    def exact(self, attack: Attack) -> bool:
        """PBP's estimate is affine in the counts: exact for every strategy."""
        return True

    def default_shares(self, oracle: Any, t: int) -> np.ndarray:
        rho = getattr(oracle, "rho", None)
        return np.asarray(rho, dtype=float) if rho is not None else super().default_shares(oracle, t)

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> np.ndarray:
        hidden: Any = oracle
        levels = claims(hidden.mechanisms, attack, m, self.prepare(hidden, attack), rng)
        return self.in_user_order(self.per_level(hidden.mechanisms, attack, levels, rng), levels)

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        """PBP: exact (its estimate is affine in the counts, with public :math:`p^*, q^*`). PPDA: None."""
        pbp: Any = oracle
        if not hasattr(pbp, "pooled_support"):
            return None
        cells = np.asarray(data[0], dtype=float)
        counts = claim_counts(pbp.mechanisms, attack, m, self.prepare(pbp, attack))
        p_star, q_star = pbp.pooled_support
        per_level = level_supports(pbp.mechanisms, attack, counts)
        support = sum(c / m * s for c, s in zip(counts, per_level, strict=True))
        honest = (
            sum(
                row.sum() * mech.support[1] + row * (mech.support[0] - mech.support[1])
                for row, mech in zip(cells, pbp.mechanisms, strict=True)
            )
            / cells.sum()
        )
        f_honest = (honest - q_star) / (p_star - q_star)
        return support_gain(
            p_star, q_star, support, attack.targets, m / (cells.sum() + m), float(f_honest[attack.targets].sum())
        )


@rule_for(FEBSF)
class FEBSFRule(LeveledRule):
    """PLDP-FEBSF: the item report at the claimed level and a reported level (:class:`FEBSFReports`)."""

    def exact(self, attack: Attack) -> bool:
        """Never: AUEM is a ratio, its expected gain is given to first order."""
        return False

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> FEBSFReports:
        febsf: Any = oracle
        levels = claims(febsf.mechanisms, attack, m, self.prepare(febsf, attack), rng)
        data = self.in_user_order(self.per_level(febsf.mechanisms, attack, levels, rng), levels)
        reported = levels
        if attack.strategy in HONEST_LOOKING and febsf.level_mechanism is not None:
            reported = febsf.level_mechanism.perturb(levels, rng).astype(np.int64)
        return FEBSFReports(data, reported)

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        """To first order: AUEM (a ratio) evaluated at the expected counts; NaN where it has no
        estimate there (the estimated :math:`p^* - q^* \\le 0`)."""
        febsf: Any = oracle
        cells = np.asarray(data[0], dtype=float)
        counts = claim_counts(febsf.mechanisms, attack, m, self.prepare(febsf, attack))
        n_level = cells.sum(axis=1)
        gap = febsf.p_star - febsf.q_star
        honest_support = n_level[:, None] * febsf.q_star[:, None] + cells * gap[:, None]
        per_level = level_supports(febsf.mechanisms, attack, counts)
        fake_support = np.array([c * s[: febsf.d] for c, s in zip(counts, per_level, strict=True)])
        fake_levels = counts @ febsf.pi if attack.strategy in HONEST_LOOKING else counts
        before = self._auem(febsf, n_level @ febsf.pi, honest_support.sum(axis=0))
        after = self._auem(febsf, n_level @ febsf.pi + fake_levels, (honest_support + fake_support).sum(axis=0))
        return float(np.sum(after[attack.targets] - before[attack.targets]))

    @staticmethod
    def _auem(febsf: Any, level_counts: np.ndarray, support: np.ndarray) -> np.ndarray:
        n = level_counts.sum()
        pp, qp = febsf.level_support
        rho = (level_counts / n - qp) / (pp - qp)
        den = float(rho @ (febsf.p_star - febsf.q_star))
        if not den > 0:
            return np.full(support.size, np.nan)
        return (support / n - float(rho @ febsf.q_star)) / den


@rule_for(MPLDP)
class MPLDPRule(LeveledRule):
    """MPLDP: per attribute, a claimed level in the clear and a basic-RAPPOR report at it.

    ``targets`` is one array of value indices per attribute (an empty one for an attribute not
    attacked: the fakes then report a uniform value honestly there), or one flat array for
    attribute 0. ``"optimal"`` (:mod:`pldp.attacks.across`) claims the levels of a split table
    ``(l, 2, levels)`` (:func:`split_rows`; an attribute's second row its fakes that set the target
    bits alone): a fake claims a level on every attribute.
    """

    strategies = tuple(s for s in HOW if s != "optimal")

    def promoted(self, oracle: FrequencyOracle, targets: Any, strategy: str) -> Any:
        mp: Any = oracle
        parts = _per_attribute(targets, mp.n_attributes)
        out = tuple(
            check_targets(t, k) if len(t) else np.empty(0, dtype=np.int64) for t, k in zip(parts, mp.k, strict=True)
        )
        if not any(t.size for t in out):
            raise ParameterError("targets must name at least one value of one attribute")
        return out

    def default_shares(self, oracle: Any, t: int) -> np.ndarray:
        return np.asarray(oracle.level_shares, dtype=float)

    def reports(self, oracle: FrequencyOracle, attack: Attack, m: int, rng: np.random.Generator) -> MPLDPReports:
        """Per attribute, claims and reports as the strategy says; ``"optimal"``: the claims of
        ``attack.split`` (:func:`split_rows`, ``[i]`` the fakes per level of attribute ``i``, also for
        an attribute not attacked), MGA reports at them or the target bits alone as the split says
        (honest reports of a uniform value on an attribute not attacked)."""
        mp: Any = oracle
        self.check_level(mp, attack, mp.n_levels)
        shares = self.shares(mp, attack, mp.n_levels)
        split = split_rows(mp, attack.split, m) if attack.strategy == "optimal" else None
        bits, levels = [], []
        for i, targets in enumerate(attack.targets):
            honest = not targets.size  # an attribute not attacked: an honest report of a uniform value
            part = (
                Attack(np.arange(mp.k[i]), "input")
                if honest
                else Attack(targets, attack.strategy, attack.level, defence=attack.defence)
            )
            if split is not None:
                lv = claims(mp.mechanisms[i], Attack(part.targets, "optimal", split=split[i]), m, shares, rng)
                part = part if honest else Attack(targets, "optimal", split=split[i])  # with its fakes "alone"
            else:
                lv = claims(mp.mechanisms[i], part, m, shares, rng)
            bits.append(self.in_user_order(self.per_level(mp.mechanisms[i], part, lv, rng), lv))
            levels.append(lv)
        return MPLDPReports(tuple(bits), np.stack(levels, axis=1).reshape(m, mp.n_attributes))

    def expected_gain(self, oracle: FrequencyOracle, attack: Attack, m: int, data: tuple[Any, ...]) -> float | None:
        """The sum over attacked attributes of :func:`pldp.robustness.combined_gain` with OC weights."""
        mp: Any = oracle
        values, user_levels = (np.asarray(a) for a in data)
        shares = self.shares(mp, attack, mp.n_levels)
        total = 0.0
        for i, targets in enumerate(attack.targets):
            if not targets.size:
                continue
            row = None if attack.split is None else split_rows(mp, attack.split, m)[i]
            part = Attack(targets, attack.strategy, attack.level, defence=attack.defence, split=row)
            k, t = mp.k[i], mp.n_levels
            cells = np.bincount(user_levels[:, i] * k + values[:, i], minlength=t * k).reshape(t, k).astype(float)
            n = cells.sum(axis=1)
            fakes = claim_counts(mp.mechanisms[i], part, m, shares)
            shift = np.array([_standardized(mech, targets, report_strategy(part)) for mech in mp.mechanisms[i]])
            honest = cells / np.where(n > 0, n, 1.0)[:, None]
            eps = mp.level_eps[i]
            total += combined_gain(oc_weights(n, eps), oc_weights(n + fakes, eps), honest, shift, n, fakes, targets)
        return total

    def frequencies(self, oracle: FrequencyOracle, tally: Any, method: str, options: dict[str, Any]) -> Any:
        return tuple(e.frequencies for e in oracle.estimate(tally, method, **options))

    def difference(self, after: Any, before: Any) -> Any:
        return tuple(a - b for a, b in zip(after, before, strict=True))

    def total(self, shift: Any, targets: Any) -> float:
        return float(sum(np.sum(s[t]) for s, t in zip(shift, targets, strict=True)))


def split_rows(mp: Any, split: Any, m: int | None = None) -> np.ndarray:
    """An MPLDP split as ``(l, 2, levels)`` fakes per attribute, report rule and claimed level: row
    ``[i, 0]`` MGA-style reports, row ``[i, 1]`` reports that set the target bits alone. Given flat
    in the order of :func:`pldp.attacks.optimal.atoms_of`, or as a table ``(l, 2, levels)``, or as
    ``(l, levels)`` (MGA-style only). Every attribute holds the same number of fakes (``m`` if
    given), since a fake user claims a level on every attribute."""
    s = np.asarray(split)
    a, t = mp.n_attributes, mp.n_levels
    if s.size not in (a * t, 2 * a * t) or s.dtype.kind not in "iu" or np.any(s < 0):
        raise ParameterError(
            f"an MPLDP split must be {a} x {t} (or {a} x 2 x {t}, the second row of each attribute the fakes "
            "that set the target bits alone) non-negative fake counts (attribute, claimed level)"
        )
    rows = s.reshape(a, -1, t).astype(np.int64)
    if rows.shape[1] == 1:
        rows = np.concatenate([rows, np.zeros_like(rows)], axis=1)
    totals = rows.sum(axis=(1, 2))
    if np.any(totals != totals[0]) or (m is not None and int(totals[0]) != m):
        want = f"{m}" if m is not None else "the same number of"
        raise ParameterError(
            f"every attribute's row of an MPLDP split must hold {want} fakes (a fake claims a level on every "
            f"attribute), got {totals.tolist()}"
        )
    return rows


def _standardized(mech: Any, targets: np.ndarray, how: str) -> np.ndarray:
    s = level_support(mech, targets, how)
    p, q = mech.support
    return (s - q) / (p - q)


def _per_attribute(targets: Any, n: int) -> list[Any]:
    """MPLDP's targets: one sequence per attribute, or one flat sequence of attribute 0's."""
    if isinstance(targets, (list, tuple)) and len(targets) == n and all(np.ndim(t) == 1 for t in targets):
        return [np.asarray(t, dtype=np.int64) for t in targets]
    return [np.asarray(targets), *([np.empty(0, dtype=np.int64)] * (n - 1))]
