"""How well a hidden budget level is protected by the whole report (ERRATA FEBSF-6).

In PLDP-FEBSF (Wu, Zhu, Zhang, Xie, *Overcoming Challenges in PLDP*, Sec. 5.1) a user at level
:math:`\\tau` sends an item report :math:`Y \\sim Q_\\tau(\\cdot \\mid x)` drawn at her level's
budget :math:`\\varepsilon_\\tau` and a level report :math:`L \\sim \\pi(\\cdot \\mid \\tau)` drawn at
:math:`\\varepsilon_p`; the paper claims the level is protected at :math:`\\varepsilon_p`. It is
not: :math:`Y` depends on :math:`\\tau` too, so the level's protection is that of the pair
:math:`(Y, L)`, independent given :math:`(x, \\tau)`. :func:`level_protection` computes it
exactly, as a worst case and as the success of a Bayes guess, and :class:`FEBSFPrivacy` is
:meth:`pldp.protocols.FEBSF.privacy`'s report, which carries it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from pldp._validation import as_frequencies
from pldp.channel.direct import DirectNode
from pldp.channel.exact import log_ratio
from pldp.channel.leveled import LeveledNode
from pldp.channel.node import Node, NodeVisitor
from pldp.channel.sampling import GRID
from pldp.channel.unary import UnaryNode
from pldp.errors import ParameterError
from pldp.privacy.base import ComposedPrivacy

__all__ = ["FEBSFPrivacy", "LevelProtection", "level_protection"]


@dataclass(frozen=True)
class LevelProtection:
    """The protection of a hidden budget level by the whole report (ERRATA FEBSF-6).

    A user holds an item :math:`x` and a level :math:`\\tau` among ``t``, and sends an item
    report :math:`y \\sim Q_\\tau(\\cdot \\mid x)` and (when the level is perturbed) a level report
    :math:`l \\sim \\pi(\\cdot \\mid \\tau)`, independent given :math:`(x, \\tau)`. Every probability
    is the one the samplers run: the integer thresholds on the :math:`2^{-32}` grid of
    :meth:`~pldp.FrequencyOracle.sampler` (equal to the mechanisms' own ``support`` and
    ``channel()``, which are exact multiples of the grid step).

    Attributes
    ----------
    claimed : float or None
        What is claimed for the level: PLDP-FEBSF's :math:`\\varepsilon_p` (Wu et al., step (5));
        None for PBP and PPDA, which send no level report and claim nothing about the level.
    worst_case : float
        The level's exact worst-case privacy, from :meth:`pldp.channel.LeveledNode.level_ratio`:

        .. math::

            \\varepsilon_{\\text{level}} = \\ln \\max_{x, y, l, \\tau \\ne \\tau'}
            \\frac{Q_\\tau(y \\mid x)\\, \\pi(l \\mid \\tau)}{Q_{\\tau'}(y \\mid x)\\, \\pi(l \\mid \\tau')}.

    level_report_epsilon : float
        The level report's own realised LDP epsilon,
        :math:`\\ln \\max_{l, \\tau, \\tau'} \\pi(l \\mid \\tau) / \\pi(l \\mid \\tau')` (0 when no
        level report is sent: PBP, PPDA).
    bayes_whole : float
        Success probability of the Bayes-optimal guess of the level from the whole report, under
        the priors: with :math:`P_\\tau(y) = \\sum_x p_x Q_\\tau(y \\mid x)`,

        .. math::

            S_{\\text{whole}} = \\sum_{y, l} \\max_\\tau \\rho_\\tau\\, \\pi(l \\mid \\tau)\\, P_\\tau(y).

    bayes_level_report : float
        The same from the level report alone,
        :math:`S_{\\text{level}} = \\sum_l \\max_\\tau \\rho_\\tau\\, \\pi(l \\mid \\tau)`.
    prior_guess : float
        Guessing with no report, :math:`S_0 = \\max_\\tau \\rho_\\tau`.
    item_prior : tuple of float
        :math:`p`, the items' distribution (independent of the level).
    level_prior : tuple of float
        :math:`\\rho`, the levels' distribution.

    Notes
    -----
    :math:`S_0 \\le S_{\\text{level}} \\le S_{\\text{whole}}` always (more information never hurts
    a Bayes guess). :attr:`gain` and :attr:`advantage_ratio` say how much the item report adds.

    References
    ----------
    Wu, Zhu, Zhang, Xie, *Overcoming Challenges in PLDP*, Sec. 5.1 step (5); pldp's
    ``docs/errata.md``, FEBSF-6.
    """

    claimed: float | None
    worst_case: float
    level_report_epsilon: float
    bayes_whole: float
    bayes_level_report: float
    prior_guess: float
    item_prior: tuple[float, ...] = field(repr=False)
    level_prior: tuple[float, ...] = field(repr=False)

    @property
    def gain(self) -> float:
        """Relative gain of the whole report over the level report alone,
        :math:`S_{\\text{whole}} / S_{\\text{level}} - 1` (0.5: the guess succeeds half as often again)."""
        return self.bayes_whole / self.bayes_level_report - 1.0

    @property
    def advantage_ratio(self) -> float:
        """How many times the level report's own advantage over a blind guess the whole report has,
        :math:`(S_{\\text{whole}} - S_0) / (S_{\\text{level}} - S_0)` (``inf`` when the level report
        tells nothing, e.g. none is sent, but the whole report does; 1 when neither tells anything)."""
        own = self.bayes_level_report - self.prior_guess
        whole = self.bayes_whole - self.prior_guess
        return whole / own if own > 0 else (math.inf if whole > 0 else 1.0)

    @property
    def priors(self) -> str:
        """The priors in words, e.g. ``"uniform items and levels"``."""
        items = "uniform items" if _is_uniform(self.item_prior) else "the given item prior"
        levels = "uniform levels" if _is_uniform(self.level_prior) else "the given level prior"
        if items.startswith("uniform") and levels.startswith("uniform"):
            return "uniform items and levels"
        return f"{items}, {levels}"

    def summary(self) -> str:
        """One line: the claim, the worst case, and the Bayes success probabilities."""
        claim = f"the paper claims eps_p={self.claimed:g}" if self.claimed is not None else "nothing is claimed for it"
        if self.level_report_epsilon > 0:
            guess = (
                f"a Bayes guess from the whole report succeeds w.p. {self.bayes_whole:.2f} against "
                f"{self.bayes_level_report:.2f} from the level report alone and {self.prior_guess:.2f} with no report"
            )
        else:
            guess = (
                f"no level report is sent, yet a Bayes guess from the report succeeds w.p. {self.bayes_whole:.2f} "
                f"against {self.prior_guess:.2f} with no report"
            )
        return (
            f"level: {claim}; the whole report protects it at {_digits(self.worst_case)} (worst case); "
            f"{guess} ({self.priors})"
        )


def _digits(x: float) -> str:
    """Three significant digits, trailing zeros kept (1.10, 8.83, 23.6, 569)."""
    return f"{x:.0f}" if not math.isfinite(x) or abs(x) >= 100 else f"{x:#.3g}"


def _is_uniform(p: tuple[float, ...]) -> bool:
    return max(p) - min(p) <= 1e-12 * max(p)


def _prior(p: Any, n: int, name: str) -> np.ndarray:
    if p is None:
        return np.full(n, 1.0 / n)
    return as_frequencies(p, n, name)


def _leveled_node(oracle: Any) -> tuple[LeveledNode, float | None]:
    """The sampler node of ``oracle`` and the level's claimed protection (``eps_p``; None for PBP, PPDA)."""
    name = type(oracle).__name__
    try:
        node = oracle.sampler()
    except (AttributeError, NotImplementedError) as exc:
        raise ParameterError(f"{name} has no budget levels to hide") from exc
    node = node.as_leveled()
    if node is None:
        raise ParameterError(f"{name} has no budget levels to hide")
    if node.t < 2:
        raise ParameterError(f"{name} has a single budget level: there is nothing to hide")
    if node.level_report == "clear":
        raise ParameterError(f"{name} sends the budget level in the clear: it is not protected at all")
    return node, getattr(oracle, "level_claim", None)


def _level_channel(node: LeveledNode) -> tuple[np.ndarray, float]:
    """``pi[tau, l] = Pr(level report l | tau)`` and the level report's exact realised epsilon."""
    s = node.level_sampler
    if s is None:  # hidden: nothing is sent, one certain "output"
        return np.ones((node.t, 1)), 0.0
    w = np.array(s.weights, dtype=float)
    pi = np.tile(w, (node.t, 1))
    pi[np.diag_indices(node.t)] += s.keep
    eps = max(log_ratio(wl + s.keep, wl) for wl in set(s.weights))
    return pi / GRID, eps


def _bayes_direct(node: LeveledNode, p: np.ndarray, rho: np.ndarray, pi: np.ndarray) -> float:
    """``sum_{y,l} max_tau rho_tau pi(l|tau) P_tau(y)`` for direct item reports (any item prior)."""
    rows = []
    for item in node.items:
        assert isinstance(item, DirectNode)
        py = np.zeros(item.d)
        py[: p.size] = p
        rows.append((np.array(item.weights, dtype=float) + item.keep * py) / GRID)  # P_tau(y)
    marg = np.array(rows)  # (t, width)
    joint = rho[:, None, None] * pi[:, :, None] * marg[:, None, :]  # (tau, l, y)
    return float(joint.max(axis=0).sum())


def _log_binom(n: int, k: np.ndarray) -> np.ndarray:
    from scipy.special import gammaln  # here, not at the top: the privacy layer loads with every spec

    return gammaln(n + 1) - gammaln(k + 1) - gammaln(n - k + 1)


def _bayes_unary(node: LeveledNode, rho: np.ndarray, pi: np.ndarray) -> float:
    """The same for unary item reports under a uniform item prior, by the ones' counts.

    With ``d`` items, ``w - d`` appended bits (PPDA) and ``a``, ``b`` the level's bit
    probabilities, ``P_tau`` of one report depends only on its ones among the first ``d`` bits
    (``m1``) and among the rest (``m2``); each ``(m1, m2)`` stands for
    ``C(d, m1) C(w - d, m2)`` reports.
    """
    d = node.d
    width = node.items[0].d
    extra = width - d
    m1 = np.arange(d + 1, dtype=float)
    m2 = np.arange(extra + 1, dtype=float)
    log_count = _log_binom(d, m1)[:, None] + _log_binom(extra, m2)[None, :]
    with np.errstate(divide="ignore"):
        log_m1, log_rest = np.log(m1), np.log(d - m1)
        log_rho, log_pi = np.log(rho), np.log(pi)
    logs = []
    for item in node.items:
        assert isinstance(item, UnaryNode)
        if len(set(item.a)) > 1 or len(set(item.b)) > 1:
            raise ParameterError("level protection needs the same bit probabilities for every item at a level")
        la, l1a = math.log(item.a[0]) - math.log(GRID), math.log(GRID - item.a[0]) - math.log(GRID)
        lb, l1b = math.log(item.b[0]) - math.log(GRID), math.log(GRID - item.b[0]) - math.log(GRID)
        with np.errstate(invalid="ignore"):  # -inf + finite is fine; the factor is 0 at m1 = 0 or d
            own_one = log_m1 + la + (m1 - 1) * lb + (d - m1) * l1b
            own_zero = log_rest + l1a + m1 * lb + (d - m1 - 1) * l1b
        first = np.logaddexp(own_one, own_zero) - math.log(d)
        logs.append(first[:, None] + (m2 * lb + (extra - m2) * l1b)[None, :])
    from scipy.special import logsumexp

    terms = []
    for lv in range(pi.shape[1]):
        best = np.full(log_count.shape, -np.inf)
        for tau, log_p in enumerate(logs):
            np.maximum(best, log_rho[tau] + log_pi[tau, lv] + log_p, out=best)
        terms.append(logsumexp(best + log_count))
    return float(np.exp(logsumexp(terms)))


class _WholeReport(NodeVisitor[float]):
    """The Bayes guess from the whole report, by the kind of the item reports (every level's is one
    kind): ``node.items[0].accept(_WHOLE_REPORT, node, p, rho, pi)``."""

    def direct(self, node: DirectNode, leveled: LeveledNode, p: np.ndarray, rho: np.ndarray, pi: np.ndarray) -> float:
        return _bayes_direct(leveled, p, rho, pi)

    def unary(self, node: UnaryNode, leveled: LeveledNode, p: np.ndarray, rho: np.ndarray, pi: np.ndarray) -> float:
        if not _is_uniform(tuple(p.tolist())):
            raise ParameterError(
                "level_protection sums unary reports by their numbers of ones, which needs a uniform item_prior"
            )
        return _bayes_unary(leveled, rho, pi)

    def leaf(self, node: Node, leveled: LeveledNode, p: np.ndarray, rho: np.ndarray, pi: np.ndarray) -> float:
        """A large-domain leaf (local hashing, Hadamard response, subset selection: PBP over OLH,
        HR, SS): refused. A report's law given the item is its category (supports the item or not),
        but the Bayes guess needs, for every output, the prior mass of the items it supports, which
        differs from output to output (the hash functions of ``2**31`` seeds); the exact worst case
        is :meth:`~pldp.channel.LeveledNode.level_ratio` (the row "the level" of ``pldp spec verify``)."""
        raise ParameterError(
            f"level_protection's Bayes guess is not computed for {node.kind} reports (it needs the prior mass "
            "every output supports); the level's exact worst case is the sampler's level_ratio (the row "
            "'the level' of pldp spec verify)"
        )


_WHOLE_REPORT = _WholeReport()


def level_protection(oracle: Any, item_prior: Any = None, level_prior: Any = None) -> LevelProtection:
    """The exact protection of a user's hidden budget level by her whole report (ERRATA FEBSF-6).

    Parameters
    ----------
    oracle : FEBSF, PBP or PPDA
        A protocol whose reports hide the level: PLDP-FEBSF (the level perturbed at
        :math:`\\varepsilon_p`), PBP or PPDA (the level not sent; its sampler node's
        ``level_report`` is ``"perturbed"`` or ``"hidden"``). RCF and APLDP send the level in the
        clear, and a PLDP-FEBSF with one level has none to hide (:class:`~pldp.errors.ParameterError`).
    item_prior : array_like of float, optional
        Distribution of the items, independent of the level; default uniform. Unary item reports
        (OUE, RAPPOR) need it uniform: the computation sums over the reports by their numbers of
        ones, which is sufficient only then (:class:`~pldp.errors.ParameterError` otherwise).
    level_prior : array_like of float, optional
        Distribution of the levels; default uniform.

    Returns
    -------
    LevelProtection
        The claim, the exact worst case, the level report's own epsilon and the Bayes success
        probabilities (definitions there). Exact: sums over every output, in log space for unary
        reports (stable for ``d`` in the thousands), no sampling.

    Examples
    --------
    PLDP-FEBSF's levels 0.1, ..., 1.0 and :math:`\\varepsilon_p = 0.3`, OUE item reports over 16
    items: the level is protected at 8.83, not 0.3.

    >>> import numpy as np
    >>> from pldp.protocols import FEBSF
    >>> lp = level_protection(FEBSF(np.arange(1, 11) / 10, 0.3, 16, oracle="oue"))
    >>> lp.claimed, round(lp.worst_case, 2), round(lp.level_report_epsilon, 6)
    (0.3, 8.83, 0.3)
    >>> round(lp.bayes_whole, 3), round(lp.bayes_level_report, 3), lp.prior_guess
    (0.175, 0.13, 0.1)

    A Bayes guess of the level from the whole report succeeds a third more often than from the
    level report alone:

    >>> round(lp.gain, 2)
    0.34
    """
    node, claimed = _leveled_node(oracle)
    p = _prior(item_prior, node.d, "item_prior")
    rho = _prior(level_prior, node.t, "level_prior")
    pi, level_eps = _level_channel(node)
    whole = node.items[0].accept(_WHOLE_REPORT, node, p, rho, pi)
    level_only = float((rho[:, None] * pi).max(axis=0).sum())
    return LevelProtection(
        claimed=None if claimed is None else float(claimed),
        worst_case=log_ratio(*node.level_ratio()),
        level_report_epsilon=level_eps,
        bayes_whole=whole,
        bayes_level_report=level_only,
        prior_guess=float(rho.max()),
        item_prior=tuple(p.tolist()),
        level_prior=tuple(rho.tolist()),
    )


@dataclass(frozen=True, repr=False)
class FEBSFPrivacy(ComposedPrivacy):
    """:meth:`pldp.protocols.FEBSF.privacy`: the item and level reports' LDP, and the level's protection.

    The composed check (item report at each level, level report; sequential composition) is
    :class:`~pldp.privacy.ComposedPrivacy`'s; :attr:`level` adds how well the *level* is hidden by
    the whole report (uniform items and levels; None with a single level), which is not
    :math:`\\varepsilon_p` (ERRATA FEBSF-6).
    """

    level: LevelProtection | None = None

    def summary(self) -> str:
        """The composed check's line, then the level's line (:meth:`LevelProtection.summary`)."""
        head = super().summary()
        return head if self.level is None else f"{head}\n{self.level.summary()}"
