"""The audit over time: how much do ``r`` reports of one device reveal?

A device that reports again and again gives the attacker ``r`` reports of one user. The game of
:func:`audit_rounds` draws ``r`` rounds of real reports for each of two neighbouring *histories*
(one value per round) and bounds the privacy loss of the whole sequence from below, with the
Clopper–Pearson machinery of the one-report audit (:mod:`pldp.audit.bounds`). Two ways to report:

* ``"fresh"``: the one-report mechanism used ``r`` times without a memo (for a memoized chain, its
  one-report channel at :math:`\\varepsilon_1`: every round draws a new permanent response). The
  loss composes: the claim is :math:`\\varepsilon_1` per round where the histories differ
  (:math:`r\\,\\varepsilon_1` when they differ in every round), and the audited bound grows with ``r``.
* ``"memoized"``: the chain with its memo (``perturb(x, rng, memo=...)``): one permanent response
  per value, kept across rounds. Every report of a value is a function of that response and fresh
  coins, so between two histories with the same *change pattern* (only the values differ) the
  claim is :math:`\\varepsilon_\\infty` per distinct value, whatever ``r``.

Three pairs of histories (:func:`segments`), for the audited pair of items ``(a, b)``:

* ``"same"``: the device holds one value in every round: :math:`a^r` against :math:`b^r`;
* ``"change"``: the value changes once, after round :math:`h = \\lceil r/2 \\rceil`:
  :math:`a^h b^{r-h}` against :math:`b^h a^{r-h}`. The two histories differ in every round and
  hold two distinct values each, so the memo draws two permanent responses: the memoized claim is
  :math:`\\varepsilon_\\infty(a, b) + \\varepsilon_\\infty(b, a)`, memoization's known limit (RAPPOR's
  :math:`\\varepsilon_\\infty` is per value, not per device).
* ``"split"``: one value against a change halfway: :math:`a^{g} b^{r-g}` against :math:`a^r`,
  :math:`g = \\lfloor r/2 \\rfloor` (at ``r = 1``: ``b`` against ``a``). The histories differ in
  their change pattern, not only in their values: the first draws two permanent responses, the
  second one, and reports of one memo agree more often than reports of two. No
  :math:`\\varepsilon_\\infty` bounds this pair: its exact loss grows with ``r`` without limit
  (:func:`pldp.privacy.pair_loss`; :math:`a^{15} b^{15}` against :math:`a^{30}` reaches 20.9 for
  L-GRR over two items at :math:`\\varepsilon_\\infty = 2`, :math:`\\varepsilon_1 = 1`). The
  memoized row's claim is that exact loss in the audited direction, :math:`\\max_y \\ln P(y \\mid
  h_0) / P(y \\mid h_1)` (``pldp.privacy.rounds_search.pair_extremes``), or, where it would take
  more than ``pldp.privacy.rounds.MAX_EXACT`` output configurations, the proven bound
  :math:`\\min(\\varepsilon_{IRR} m, \\varepsilon_1 + (r - 1) \\varepsilon_{IRR})` for the ``m``
  rounds where the histories differ (:func:`pldp.privacy.over_rounds`, Notes). An audited bound
  above it would be a bug in the sampler or in the accountant.

**The test** is the likelihood ratio of the whole sequence (Neyman–Pearson), from the exact
parameters of the code. Rounds in which each history holds one value form a *segment*; the rounds
of one history that hold one value ``v`` (one or more segments) share its permanent response
``z``, and their reports are independent given ``z``, so with their histogram :math:`C_y` (direct
reports) the memoized likelihood of value ``v`` sums over the permanent response,

.. math::

    L(v) = \\sum_z Q_1(z \\mid v) \\prod_y Q_2(y \\mid z)^{C_y},

one matrix product and a log-sum-exp per chunk of devices, and a history's likelihood is the product
over its values. For unary reports bit ``k`` is set :math:`S_k` times out of the value's ``m``
reports, and

.. math::

    L(v) = \\prod_{k} \\sum_{z \\in \\{0, 1\\}} \\Pr(z_k = z \\mid v)\\,
    p_{z,k}^{S_k} (1 - p_{z,k})^{m - S_k}, \\qquad p_{1,k} = a_{2,k},\\ p_{0,k} = b_{2,k}

(a mixture of two binomials per bit ``k`` the test reads). When the two histories share their change
pattern, only the bits of ``a`` and ``b`` differ in law and the test reads those two; for ``"split"`` every bit does
(each of the ``d`` bits of the first history comes from two permanent responses, of the second
from one), and the test reads them all. Fresh reports are independent, so their log-ratio is a sum
over reports. The test fires when the log-ratio reaches a threshold
chosen on a separate *calibration* sample (the threshold of the largest Clopper–Pearson bound
there); the bound is then computed on fresh draws, so it is a valid lower bound with the stated
joint confidence (Bonferroni over the rows) whatever the threshold. A sampler that does not follow
the parameters (a memo that redraws its permanent response) only changes the counts: the test is
still a fixed event, and its bound still holds.

What it cannot show. A lower bound, at the resolution of the trials: with ``n`` devices per input
no audit proves much more than :math:`\\ln(n)`, so the fresh curve bends away from
:math:`r\\,\\varepsilon_1` long before ``r = 30`` at small budgets, and the ``"split"`` curve bends
away from its exact loss; and it audits one pair of items, three history shapes, one direction of
each, the library's mechanisms (not the clients' memo stores).
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from pldp.audit.bounds import clopper_pearson, epsilon_lower_bound
from pldp.audit.events import pair_claim
from pldp.audit.histories import MAX_ROUNDS, SCENARIOS, Segment, parse_rounds, same_pattern, segments
from pldp.audit.pairs import Input, Pair
from pldp.audit.round_models import MODEL, Model, UnaryModel
from pldp.audit.rounds import RoundsResult, RoundsRow
from pldp.channel import Node
from pldp.errors import ParameterError

__all__ = [
    "MAX_ROUNDS",
    "MODES",
    "ROUNDS",
    "SCENARIOS",
    "Segment",
    "audit_rounds",
    "parse_rounds",
    "same_pattern",
    "segments",
]

#: How the device reports (module docstring).
MODES = ("memoized", "fresh")
#: The default numbers of rounds.
ROUNDS = (1, 2, 5, 10, 30)
#: Most histogram cells per chunk of devices (bounds the memory of a direct audit).
_CELLS = 1 << 22
#: Most devices per chunk.
_CHUNK = 1 << 16
#: Most candidate thresholds tried on the calibration sample.
_CANDIDATES = 512


# --------------------------------------------------------------------------- the game
def _device_llrs(
    mech: Any, model: Model, segs: list[Segment], track: tuple[int, ...], side: int, n: int, memoized: bool, rng: Any
) -> np.ndarray:
    """The log-likelihood ratios of ``n`` devices with history ``side``, each drawing every round's report."""
    out = np.empty(n)
    chunk = max(1024, min(_CHUNK, _CELLS // model.d))
    for start in range(0, n, chunk):
        m = min(chunk, n - start)
        stats = [model.empty(m, track) for _ in segs]
        memo = mech.memo() if memoized else None
        for s, seg in enumerate(segs):
            x = np.full(m, seg.v1 if side else seg.v0, dtype=np.int64)
            for _ in range(seg.length):
                if memo is not None:
                    reports, memo = mech.perturb(x, rng, memo=memo)
                else:
                    reports = mech.perturb(x, rng)
                model.add(stats[s], mech.report_columns(reports), track)
        out[start : start + m] = model.llr(stats, segs, track, memoized)
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
    memo = node.memoized
    one_node = node.one_report() if memo else node  # type: ignore[attr-defined]

    def claim(of: Node, u: int, v: int) -> float:
        return pair_claim(of, Pair("item", Input(u), Input(v)))

    perm = (lambda u, v: claim(node.permanent, u, v)) if memo else None  # type: ignore[attr-defined]
    return perm, (lambda u, v: claim(one_node, u, v))


def _history_loss(node: Node, segs: list[Segment]) -> float:
    """The exact loss :math:`\\max_y \\ln P(y \\mid h_0) / P(y \\mid h_1)` of the memoized chain ``node``
    between the two histories of ``segs``, or its proven bound where the exact one is too costly
    (module docstring, ``"split"``)."""
    from pldp.privacy.rounds import MAX_EXACT
    from pldp.privacy.rounds_search import chain_of, joint_type, pair_cost, pair_extremes

    chain = chain_of(node)
    h0 = tuple(seg.v0 for seg in segs for _ in range(seg.length))
    h1 = tuple(seg.v1 for seg in segs for _ in range(seg.length))
    classes = joint_type(h0, h1)
    if pair_cost(chain.parts, chain.per_bit, classes) <= MAX_EXACT:
        return pair_extremes(chain.parts, chain.per_bit, classes)[0]
    differ = sum(seg.length for seg in segs if seg.v0 != seg.v1)
    return min(differ * chain.irr, chain.one + (len(h0) - 1) * chain.irr)


def _row_claim(node: Node, segs: list[Segment], memoized: bool, perm: Any, one: Any) -> float:
    """What the row claims for the whole sequence (module docstring): :math:`\\varepsilon_1` per fresh
    report where the histories differ; memoized, :math:`\\varepsilon_\\infty` per distinct value (or
    :math:`\\varepsilon_1` if reported once) when the histories share their change pattern, else the
    exact loss of the pair (:func:`_history_loss`)."""
    if memoized and not same_pattern(segs):
        return _history_loss(node, segs)
    total = 0.0
    for seg in segs:
        if seg.v0 == seg.v1:  # the same law under both histories
            continue
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
    scenarios : sequence of {"same", "change", "split"}
        The pairs of histories (module docstring; default all three).
    calibration : int, optional
        Devices per history and row that choose the test's threshold (default ``trials // 2``, at
        least 1000); drawn apart from the ``trials``, so the bound holds whatever they choose.

    Returns
    -------
    RoundsResult
        One row per mode, scenario and number of rounds; ``flagged`` rows leak more than claimed.

    Raises
    ------
    ParameterError
        Not a pldp mechanism with a direct, unary or memo sampler, or a bad argument.

    Examples
    --------
    >>> import numpy as np, pldp
    >>> res = audit_rounds(pldp.LGRR(1.0, 0.5, 2), rounds=[1, 10], trials=4000, scenarios=["same"],
    ...                    rng=np.random.default_rng(0))
    >>> res.ok, [(r.mode, r.rounds) for r in res.rows]
    (True, [('memoized', 1), ('memoized', 10), ('fresh', 1), ('fresh', 10)])
    >>> res.row("fresh", "same", 10).audited > 1.0 >= res.row("memoized", "same", 10).audited
    True

    One value against a change halfway: the memoized loss passes :math:`\\varepsilon_\\infty` and
    stays under the pair's exact loss (the row's claim).

    >>> res = audit_rounds(pldp.LGRR(2.0, 1.0, 2), rounds=[8], trials=50_000, scenarios=["split"],
    ...                    modes=["memoized"], rng=np.random.default_rng(0))
    >>> row = res.row("memoized", "split", 8)
    >>> round(row.claimed, 2), 2.0 < row.audited <= row.claimed
    (5.38, True)
    """
    from pldp.oracle import FrequencyOracle

    if not isinstance(mechanism, FrequencyOracle):
        raise ParameterError(f"audit_rounds audits a pldp mechanism, got {type(mechanism).__name__}")
    node = mechanism.sampler()
    if not node.takes_one_item:
        raise ParameterError(
            f"the audit over time runs on direct, unary and memoized mechanisms, not a {node.kind} sampler"
        )
    memo = node.memoized
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

    model = node.accept(MODEL)
    unary = isinstance(model, UnaryModel)
    perm, one = _claims(node, (a, b))
    plan = [(mode, sc, r) for mode in modes for sc in scenarios for r in rs]
    each = alpha / len(plan)
    n = int(trials)
    rows = []
    start = time.perf_counter()
    for mode, sc, r in plan:
        segs = segments(sc, r, a, b)
        mem = mode == "memoized"
        # every bit differs in law between two change patterns (module docstring), else only the pair's
        track = tuple(range(d)) if unary and mem and not same_pattern(segs) else (a, b)
        cal = [_device_llrs(mechanism, model, segs, track, side, n_cal, mem, rng) for side in (0, 1)]
        t = _threshold(cal[0], cal[1], each)
        l0, l1 = (_device_llrs(mechanism, model, segs, track, side, n, mem, rng) for side in (0, 1))
        k0, k1 = int(np.count_nonzero(l0 >= t)), int(np.count_nonzero(l1 >= t))
        audited = epsilon_lower_bound(k0, n, k1, n, each)
        claimed = _row_claim(node, segs, mem, perm, one)
        rows.append(
            RoundsRow(mode, sc, r, f"{a} vs {b}", claimed, audited, t, k0 / n, k1 / n, n, audited > claimed + 1e-12)
        )
    eps_perm = perm(a, b) if perm is not None else math.nan
    return RoundsResult(repr(mechanism), alpha, f"{a} vs {b}", eps_perm, one(a, b), rows, time.perf_counter() - start)
