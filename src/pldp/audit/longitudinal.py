"""The audit over time: how much do ``r`` reports of one device reveal? (issue 27, item 5)

A device that reports again and again gives the attacker ``r`` reports of one user. The game of
:func:`audit_rounds` draws ``r`` rounds of real reports for each of two neighbouring *histories*
(one value per round) and bounds the privacy loss of the whole sequence from below, with the
Clopper–Pearson machinery of the one-report audit (:mod:`pldp.audit.bounds`). Two ways to report:

* ``"fresh"``: the one-report mechanism used ``r`` times without a memo (for a memoized chain, its
  one-report channel at :math:`\\varepsilon_1`: every round draws a new permanent response). The
  loss composes: the claim is :math:`r\\,\\varepsilon_1`, and the audited bound grows with ``r``.
* ``"memoized"``: the chain with its memo (``perturb(x, rng, memo=...)``): one permanent response
  per value, kept across rounds. Every report of a value is a function of that response and fresh
  coins, so the claim is :math:`\\varepsilon_\\infty` per distinct value, whatever ``r``.

Two histories (:func:`segments`), for the audited pair of items ``(a, b)``:

* ``"same"``: the device holds one value in every round: :math:`a^r` against :math:`b^r`;
* ``"change"``: the value changes once, after round :math:`h = \\lceil r/2 \\rceil`:
  :math:`a^h b^{r-h}` against :math:`b^h a^{r-h}`. The two histories differ in every round and
  hold two distinct values each, so the memo draws two permanent responses: the memoized claim is
  :math:`\\varepsilon_\\infty(a, b) + \\varepsilon_\\infty(b, a)`, memoization's known limit (RAPPOR's
  :math:`\\varepsilon_\\infty` is per value, not per device).

**The test** is the likelihood ratio of the whole sequence (Neyman–Pearson), from the exact
parameters of the code. Rounds that hold one value form a *segment*; the reports of a segment are
independent given its permanent response ``z``, so with the segment's histogram :math:`C_y` (direct
reports) the memoized likelihood of value ``v`` sums over the permanent response,

.. math::

    L(v) = \\sum_z Q_1(z \\mid v) \\prod_y Q_2(y \\mid z)^{C_y},

one matrix product and a log-sum-exp per chunk of devices; for unary reports the bits of the pair's
two items carry the whole ratio, bit ``k`` set :math:`S_k` times out of the segment's ``m`` reports,
and

.. math::

    L(v) = \\prod_{k \\in \\{a, b\\}} \\sum_{z \\in \\{0, 1\\}} \\Pr(z_k = z \\mid v)\\,
    p_{z,k}^{S_k} (1 - p_{z,k})^{m - S_k}, \\qquad p_{1,k} = a_{2,k},\\ p_{0,k} = b_{2,k}

(a mixture of two binomials per bit; the other bits have one law under both values). Fresh reports are independent, so
their log-ratio is a sum over reports. The test fires when the log-ratio reaches a threshold
chosen on a separate *calibration* sample (the threshold of the largest Clopper–Pearson bound
there); the bound is then computed on fresh draws, so it is a valid lower bound with the stated
joint confidence (Bonferroni over the rows) whatever the threshold. A sampler that does not follow
the parameters (a memo that redraws its permanent response) only changes the counts: the test is
still a fixed event, and its bound still holds.

What it cannot show. A lower bound, at the resolution of the trials: with ``n`` devices per input
no audit proves much more than :math:`\\ln(n)`, so the fresh curve bends away from
:math:`r\\,\\varepsilon_1` long before ``r = 30`` at small budgets; and it audits one pair of items,
one history shape, the library's mechanisms (not the clients' memo stores).
"""

from __future__ import annotations

import math
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import special

from pldp.audit.bounds import clopper_pearson, epsilon_lower_bound
from pldp.audit.events import bit_of, pair_claim
from pldp.audit.pairs import Input, Pair
from pldp.audit.rounds import RoundsResult, RoundsRow
from pldp.channel import DirectNode, MemoNode, Node, NodeVisitor, UnaryNode
from pldp.channel.memo import CHAIN_GRID
from pldp.channel.sampling import GRID
from pldp.errors import ParameterError

__all__ = ["MAX_ROUNDS", "MODES", "ROUNDS", "SCENARIOS", "Segment", "audit_rounds", "parse_rounds", "segments"]

#: The histories a device may have (module docstring).
SCENARIOS = ("same", "change")
#: How the device reports (module docstring).
MODES = ("memoized", "fresh")
#: The default numbers of rounds.
ROUNDS = (1, 2, 5, 10, 30)
#: Most rounds per device in one game.
MAX_ROUNDS = 1000
#: Most histogram cells per chunk of devices (bounds the memory of a direct audit).
_CELLS = 1 << 22
#: Most devices per chunk.
_CHUNK = 1 << 16
#: Most candidate thresholds tried on the calibration sample.
_CANDIDATES = 512


@dataclass(frozen=True)
class Segment:
    """Rounds ``start .. stop-1`` in which history 0 holds ``v0`` and history 1 holds ``v1``."""

    start: int
    stop: int
    v0: int
    v1: int

    @property
    def length(self) -> int:
        """Rounds in the segment."""
        return self.stop - self.start


def segments(scenario: str, rounds: int, a: int, b: int) -> list[Segment]:
    """The segments of the two histories of ``scenario`` over ``rounds`` rounds (module docstring).

    Examples
    --------
    >>> [(s.start, s.stop, s.v0, s.v1) for s in segments("change", 5, 0, 1)]
    [(0, 3, 0, 1), (3, 5, 1, 0)]
    """
    if scenario not in SCENARIOS:
        raise ParameterError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    if scenario == "same" or rounds == 1:
        return [Segment(0, rounds, a, b)]
    h = -(-rounds // 2)
    return [Segment(0, h, a, b), Segment(h, rounds, b, a)]


def parse_rounds(text: str | Sequence[int]) -> tuple[int, ...]:
    """Numbers of rounds: ``"1,2,5,10,30"`` or a sequence of ints, each in ``1 .. MAX_ROUNDS``, sorted
    and without repeats.

    Raises
    ------
    ParameterError
        Anything else, naming the bad part.
    """
    parts = [p.strip() for p in text.split(",")] if isinstance(text, str) else list(text)
    out: set[int] = set()
    for p in parts:
        ok = isinstance(p, str) and p.isascii() and p.isdigit()
        ok = ok or (isinstance(p, (int, np.integer)) and not isinstance(p, bool))
        if not ok or not 1 <= int(p) <= MAX_ROUNDS:
            raise ParameterError(f"rounds are whole numbers 1 .. {MAX_ROUNDS} (e.g. 1,2,5,10,30), got {p!r}")
        out.add(int(p))
    if not out:
        raise ParameterError("rounds is empty: give e.g. 1,2,5,10,30")
    return tuple(sorted(out))


# --------------------------------------------------------------------------- models
def _xlog(count: np.ndarray, logp: np.ndarray) -> np.ndarray:
    """``count @ logp.T`` with ``0 * log 0 = 0``: the log-likelihood of histograms under rows of ``logp``."""
    finite = np.isfinite(logp)
    out = count @ np.where(finite, logp, 0.0).T
    if not finite.all():
        out[(count > 0).astype(np.int64) @ (~finite).T.astype(np.int64) > 0] = -np.inf
    return out


def _ratio(l0: np.ndarray, l1: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        out = l0 - l1
    return np.where(np.isnan(out), 0.0, out)  # impossible under both: no evidence either way


class _Model(ABC):
    """The exact law of a device's reports: its per-segment statistic and log-likelihood ratio."""

    def __init__(self, d: int) -> None:
        self.d = d

    @abstractmethod
    def empty(self, n: int, pair: tuple[int, int]) -> np.ndarray:
        """A zero statistic of ``n`` devices' segment."""

    @abstractmethod
    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], pair: tuple[int, int]) -> None:
        """Count one round's reports (one per device) into ``stat``."""

    @abstractmethod
    def llr(self, stat: np.ndarray, seg: Segment, pair: tuple[int, int], memoized: bool) -> np.ndarray:
        """Log-likelihood ratio of history 0 against history 1 given one segment's statistic."""


class _DirectModel(_Model):
    """Direct reports: the statistic is the segment's histogram of reported items."""

    def __init__(self, one: np.ndarray, prr: np.ndarray | None = None, irr: np.ndarray | None = None) -> None:
        super().__init__(one.shape[0])
        with np.errstate(divide="ignore"):
            self.log_one = np.log(one)
            self.log_prr = None if prr is None else np.log(prr)
            self.log_irr = None if irr is None else np.log(irr)

    def empty(self, n: int, pair: tuple[int, int]) -> np.ndarray:
        return np.zeros((n, self.d), dtype=np.float64)  # counts, float for the matrix products

    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], pair: tuple[int, int]) -> None:
        items = np.asarray(cols["item"], dtype=np.int64)
        stat.reshape(-1)[np.arange(items.size, dtype=np.int64) * self.d + items] += 1.0  # one cell per row

    def llr(self, stat: np.ndarray, seg: Segment, pair: tuple[int, int], memoized: bool) -> np.ndarray:
        if not memoized:
            ll = _xlog(stat, self.log_one[[seg.v0, seg.v1]])
            return _ratio(ll[:, 0], ll[:, 1])
        assert self.log_prr is not None and self.log_irr is not None
        given = _xlog(stat, self.log_irr)  # (n, z): log prod_y Q2(y | z)^C_y
        with np.errstate(invalid="ignore"):
            l0 = special.logsumexp(given + self.log_prr[seg.v0], axis=1)
            l1 = special.logsumexp(given + self.log_prr[seg.v1], axis=1)
        return _ratio(l0, l1)


def _direct_matrix(keep: int, weights: Sequence[int], grid: int) -> np.ndarray:
    w = np.array([float(v) for v in weights]) / float(grid)
    return np.tile(w, (len(w), 1)) + np.eye(len(w)) * (float(keep) / float(grid))


class _UnaryModel(_Model):
    """Unary reports: the statistic is how often the pair's two bits were set in the segment."""

    def __init__(
        self, one: tuple[np.ndarray, np.ndarray], prr: tuple[np.ndarray, np.ndarray] | None = None, irr: Any = None
    ) -> None:
        super().__init__(one[0].size)
        self.one, self.prr, self.irr = one, prr, irr

    def empty(self, n: int, pair: tuple[int, int]) -> np.ndarray:
        return np.zeros((n, 2), dtype=np.int64)

    def add(self, stat: np.ndarray, cols: Mapping[str, np.ndarray], pair: tuple[int, int]) -> None:
        packed = np.asarray(cols["bits"])
        for j, k in enumerate(pair):
            stat[:, j] += bit_of(packed, k)

    def _loglik(self, s: np.ndarray, m: int, k: int, value: int, memoized: bool) -> np.ndarray:
        own = value == k
        if not memoized:
            p = float((self.one[0] if own else self.one[1])[k])
            return special.xlogy(s, p) + special.xlog1py(m - s, -p)
        assert self.prr is not None
        pi = float((self.prr[0] if own else self.prr[1])[k])
        a2, b2 = float(self.irr[0][k]), float(self.irr[1][k])
        with np.errstate(divide="ignore"):
            log_pi, log_not = np.log(pi), np.log1p(-pi)
        set_ = log_pi + special.xlogy(s, a2) + special.xlog1py(m - s, -a2)
        clear = log_not + special.xlogy(s, b2) + special.xlog1py(m - s, -b2)
        return np.logaddexp(set_, clear)

    def llr(self, stat: np.ndarray, seg: Segment, pair: tuple[int, int], memoized: bool) -> np.ndarray:
        total = np.zeros(stat.shape[0])
        for j, k in enumerate(pair):
            s = stat[:, j].astype(float)
            l0 = self._loglik(s, seg.length, k, seg.v0, memoized)
            l1 = self._loglik(s, seg.length, k, seg.v1, memoized)
            total += _ratio(l0, l1)
        return total


def _probs(values: Sequence[int], grid: int) -> np.ndarray:
    return np.array([float(v) for v in values]) / float(grid)


class _ModelOf(NodeVisitor[_Model]):
    """The model of a sampler's reports over rounds: ``node.accept(_MODEL)``; a memo node's by the kind
    of its permanent node, ``node.permanent.accept(_MODEL, node)``."""

    def direct(self, node: DirectNode, chain: MemoNode | None = None) -> _Model:
        if chain is None:
            return _DirectModel(_direct_matrix(node.keep, node.weights, GRID))
        keep, weights = chain.chained()
        irr = chain.instantaneous
        return _DirectModel(
            _direct_matrix(keep, weights, CHAIN_GRID),
            _direct_matrix(node.keep, node.weights, GRID),
            _direct_matrix(irr.keep, irr.weights, GRID),  # type: ignore[union-attr]  # a direct chain's IRR
        )

    def unary(self, node: UnaryNode, chain: MemoNode | None = None) -> _Model:
        if chain is None:
            return _UnaryModel((_probs(node.a, GRID), _probs(node.b, GRID)))
        p, q = chain.chained()
        irr = chain.instantaneous
        return _UnaryModel(
            (_probs(p, CHAIN_GRID), _probs(q, CHAIN_GRID)),
            (_probs(node.a, GRID), _probs(node.b, GRID)),
            (_probs(irr.a, GRID), _probs(irr.b, GRID)),  # type: ignore[union-attr]  # a unary chain's IRR
        )

    def memo(self, node: MemoNode) -> _Model:
        return node.permanent.accept(self, node)


_MODEL = _ModelOf()


# --------------------------------------------------------------------------- the game
def _device_llrs(
    mech: Any, model: _Model, segs: list[Segment], pair: tuple[int, int], side: int, n: int, memoized: bool, rng: Any
) -> np.ndarray:
    """The log-likelihood ratios of ``n`` devices with history ``side``, each drawing every round's report."""
    out = np.empty(n)
    chunk = max(1024, min(_CHUNK, _CELLS // model.d))
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        stats = [model.empty(m, pair) for _ in segs]
        memo = mech.memo() if memoized else None
        for s, seg in enumerate(segs):
            x = np.full(m, seg.v1 if side else seg.v0, dtype=np.int64)
            for _ in range(seg.length):
                if memo is not None:
                    reports, memo = mech.perturb(x, rng, memo=memo)
                else:
                    reports = mech.perturb(x, rng)
                model.add(stats[s], mech.report_columns(reports), pair)
        out[start : start + m] = sum(model.llr(st, seg, pair, memoized) for st, seg in zip(stats, segs, strict=True))
    return out


def _threshold(l0: np.ndarray, l1: np.ndarray, alpha: float) -> float:
    """The threshold whose test ``llr >= t`` has the largest Clopper–Pearson bound on these samples."""
    s0, s1 = np.sort(l0), np.sort(l1)
    n = s0.size
    even = np.linspace(0, n - 1, min(_CANDIDATES, n))
    top = n - np.geomspace(1, n, min(_CANDIDATES, n))  # finer where the test is rare: the upper tail
    cand = np.unique(s0[np.unique(np.concatenate([even, top]).astype(np.int64))])
    k0 = s0.size - np.searchsorted(s0, cand, side="left")
    k1 = s1.size - np.searchsorted(s1, cand, side="left")
    lo, _ = clopper_pearson(k0, np.full(k0.shape, s0.size), alpha)
    _, hi = clopper_pearson(k1, np.full(k1.shape, s1.size), alpha)
    with np.errstate(divide="ignore"):
        score = np.where(lo > 0, np.log(lo) - np.log(hi), -np.inf)
    return float(cand[int(np.argmax(score))])


def _claims(node: Node, pair: tuple[int, int]) -> tuple[Any, Any]:
    """The per-pair claims ``(perm, one)``: :math:`\\varepsilon_\\infty` (None without a memo) and
    :math:`\\varepsilon_1` of an ordered pair of items."""
    memo = node.kind == "memo"
    one_node = node.one_report() if memo else node  # type: ignore[attr-defined]

    def claim(of: Node, u: int, v: int) -> float:
        return pair_claim(of, Pair("item", Input(u), Input(v)))

    perm = (lambda u, v: claim(node.permanent, u, v)) if memo else None  # type: ignore[attr-defined]
    return perm, (lambda u, v: claim(one_node, u, v))


def _row_claim(segs: list[Segment], memoized: bool, perm: Any, one: Any) -> float:
    """What the notion claims for the whole sequence (module docstring): :math:`\\varepsilon_1` per fresh
    report; :math:`\\varepsilon_\\infty` per memoized value (or :math:`\\varepsilon_1` if reported once)."""
    total = 0.0
    for seg in segs:
        fresh = seg.length * one(seg.v0, seg.v1)
        if not memoized:
            total += fresh
        else:
            p = perm(seg.v0, seg.v1)
            total += min(p, fresh) if seg.length == 1 else p
    return total


def audit_rounds(
    mechanism: Any,
    rounds: Any = ROUNDS,
    pair: tuple[int, int] = (0, 1),
    trials: int = 100_000,
    alpha: float = 0.01,
    rng: np.random.Generator | None = None,
    *,
    modes: Sequence[str] | None = None,
    scenarios: Sequence[str] = SCENARIOS,
    calibration: int | None = None,
) -> RoundsResult:
    """Audit ``r`` reports of one device, fresh and memoized, for each ``r`` in ``rounds`` (module docstring).

    Parameters
    ----------
    mechanism : FrequencyOracle
        A memoized chain (:class:`pldp.LGRR`, :class:`pldp.LOSUE`, ...: both modes) or a one-report
        direct or unary mechanism (:class:`pldp.KRR`, :class:`pldp.OUE`, ...: fresh reports only).
    rounds : str or sequence of int
        Numbers of reports per device (``"1,2,5,10,30"`` or ints, each 1 .. 1000).
    pair : (int, int)
        The two items ``a`` and ``b`` of the histories.
    trials : int
        Devices per history and row whose counts give the bound.
    alpha : float
        One minus the joint confidence of every row's bound (Bonferroni over the rows).
    rng : numpy.random.Generator, optional
        Seeds every draw (same seed, same result).
    modes : sequence of {"memoized", "fresh"}, optional
        Default: both for a memoized chain, ``("fresh",)`` otherwise.
    scenarios : sequence of {"same", "change"}
    calibration : int, optional
        Devices per history and row that choose the test's threshold (default ``trials // 2``, at
        least 1000); drawn apart from the ``trials``, so the bound holds whatever they choose.

    Returns
    -------
    RoundsResult
        One row per mode, scenario and number of rounds; ``flagged`` rows leak more than claimed.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> res = audit_rounds(pldp.LGRR(1.0, 0.5, 2), rounds=[1, 10], trials=4000, scenarios=["same"],
    ...                    rng=np.random.default_rng(0))
    >>> res.ok, [(r.mode, r.rounds) for r in res.rows]
    (True, [('memoized', 1), ('memoized', 10), ('fresh', 1), ('fresh', 10)])
    >>> res.row("fresh", "same", 10).audited > 1.0 >= res.row("memoized", "same", 10).audited
    True
    """
    from pldp.oracle import FrequencyOracle

    if not isinstance(mechanism, FrequencyOracle):
        raise ParameterError(f"audit_rounds audits a pldp mechanism, got {type(mechanism).__name__}")
    node = mechanism.sampler()
    if node.kind not in ("direct", "unary", "memo"):
        raise ParameterError(
            f"the audit over time runs on direct, unary and memoized mechanisms, not a {node.kind} sampler"
        )
    memo = node.kind == "memo"
    rs = parse_rounds(rounds)
    modes = tuple(modes) if modes is not None else (MODES if memo else ("fresh",))
    for mode in modes:
        if mode not in MODES:
            raise ParameterError(f"modes are {MODES}, got {mode!r}")
        if mode == "memoized" and not memo:
            raise ParameterError(f"{mechanism!r} keeps no memo: audit its fresh reports (modes=['fresh'])")
    for sc in scenarios:
        if sc not in SCENARIOS:
            raise ParameterError(f"scenarios are {SCENARIOS}, got {sc!r}")
    if not modes or not scenarios:
        raise ParameterError("nothing to audit: give at least one mode and one scenario")
    a, b = (int(v) for v in pair)
    d = mechanism.d
    if a == b or not (0 <= a < d and 0 <= b < d):
        raise ParameterError(f"pair must be two distinct items in 0 .. {d - 1}, got {pair!r}")
    if isinstance(trials, bool) or not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ParameterError(f"trials must be a positive integer, got {trials!r}")
    n_cal = max(1000, int(trials) // 2) if calibration is None else int(calibration)
    if n_cal < 1:
        raise ParameterError(f"calibration must be a positive integer, got {calibration!r}")
    if not 0.0 < alpha < 1.0:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha!r}")
    rng = rng if rng is not None else np.random.default_rng()

    model = node.accept(_MODEL)
    perm, one = _claims(node, (a, b))
    plan = [(mode, sc, r) for mode in modes for sc in scenarios for r in rs]
    each = alpha / len(plan)
    n = int(trials)
    rows = []
    start = time.perf_counter()
    for mode, sc, r in plan:
        segs = segments(sc, r, a, b)
        mem = mode == "memoized"
        cal = [_device_llrs(mechanism, model, segs, (a, b), side, n_cal, mem, rng) for side in (0, 1)]
        t = _threshold(cal[0], cal[1], each)
        l0, l1 = (_device_llrs(mechanism, model, segs, (a, b), side, n, mem, rng) for side in (0, 1))
        k0, k1 = int(np.count_nonzero(l0 >= t)), int(np.count_nonzero(l1 >= t))
        audited = epsilon_lower_bound(k0, n, k1, n, each)
        claimed = _row_claim(segs, mem, perm, one)
        rows.append(
            RoundsRow(mode, sc, r, f"{a} vs {b}", claimed, audited, t, k0 / n, k1 / n, n, audited > claimed + 1e-12)
        )
    eps_perm = perm(a, b) if perm is not None else math.nan
    return RoundsResult(repr(mechanism), alpha, f"{a} vs {b}", eps_perm, one(a, b), rows, time.perf_counter() - start)
