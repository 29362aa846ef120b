"""What every protocol with user-level budgets shares: levels, users, one mechanism per level.

In PLDP-FEBSF and its baselines (RCF, APLDP, PBP, PPDA) every user holds an item and one of
``t`` public budget levels :math:`\\varepsilon_1 < \\dots < \\varepsilon_t` (her choice,
independent of her item), and perturbs her item with a pure frequency oracle at her level's
budget. :class:`LeveledProtocol` holds the levels, the item domain and the level mechanisms, and
checks users ``(items, levels)`` and count tables ``cells[level, item]``;
:func:`perturb_by_level` runs every user's client (vectorised per level); :func:`cell_users`
expands a count table into users. The frequency oracles a level may use are named by
:data:`ORACLES`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any, ClassVar

import numpy as np

from pldp._validation import _show, as_counts, check_index_range, check_int
from pldp.channel.direct import DirectNode
from pldp.channel.exact import epsilon_ceiling
from pldp.channel.leveled import LeveledNode
from pldp.domain import Domain
from pldp.errors import ParameterError
from pldp.estimation.detect import UnaryLaws, tally_region
from pldp.fingerprint import canonical_labels
from pldp.mechanisms.base import Mechanism
from pldp.mechanisms.direct import KRR
from pldp.mechanisms.hadamard import HR
from pldp.mechanisms.hashed import OLH
from pldp.mechanisms.subset import SS
from pldp.mechanisms.support import SupportCountOracle
from pldp.mechanisms.unary import OUE, RAPPOR, UnaryEncoding
from pldp.params import domain_of, epsilons_of
from pldp.privacy import ComposedPrivacy
from pldp.protocols.base import Protocol
from pldp.tally import Tally, unary_report_stats

__all__ = [
    "HIDDEN_REFUSAL",
    "ORACLES",
    "SMALL_ORACLES",
    "UNARY_AFFINE",
    "LeveledProtocol",
    "cell_users",
    "check_levels",
    "check_oracle",
    "make_oracle",
    "perturb_by_level",
]

#: The pure frequency oracles a level can use: k-RR, OUE and basic (one-time) RAPPOR, and the
#: large-domain ones, OLH (each level its own optimal ``g = round(e^eps) + 1``), Hadamard response
#: and subset selection, whose reports are counted per item by support (``(p*, q*)`` per level, so
#: the pure oracles' estimators and variances apply).
ORACLES: dict[str, Callable[[float, Domain], Mechanism]] = {
    "krr": KRR,
    "oue": OUE,
    "rappor": RAPPOR,
    "olh": OLH,
    "hr": HR,
    "ss": SS,
}
#: The oracles whose reports are one item or one bit per item: what PLDP-FEBSF can use
#: (:data:`HIDDEN_REFUSAL`).
SMALL_ORACLES = ("krr", "oue", "rappor")
#: Why PLDP-FEBSF refuses the large-domain oracles (PBP takes them, one report format across levels).
HIDDEN_REFUSAL = (
    "PLDP-FEBSF's estimators (AUEM, the joint EM over the perturbed level) are derived for k-RR and unary "
    "reports only; the large-domain oracles (olh, hr, ss) run with the level in the clear (RCF, APLDP) or "
    "hidden (PBP)"
)
#: The unary oracles' bit probabilities are affine, ``a = alpha + beta * b`` at every budget (exactly on
#: the coin grid): OUE ``a = 1/2``, RAPPOR ``a = 1 - b``. So a report's expected number of ones,
#: ``alpha + (d - 1 + beta) b``, tells ``b`` (and ``a``) of any mixture of levels (PPDA's calibration).
UNARY_AFFINE: dict[str, tuple[float, float]] = {"oue": (0.5, 0.0), "rappor": (1.0, -1.0)}


def check_levels(levels: Any) -> np.ndarray:
    """Validate budget levels: a non-empty, strictly increasing vector of finite budgets > 0."""
    arr = np.asarray(levels, dtype=float).reshape(-1)
    if arr.size == 0:
        raise ParameterError("levels must hold at least one budget")
    bad = ~np.isfinite(arr) | (arr <= 0)
    if bad.any():
        raise ParameterError(f"levels must be finite and > 0; bad: {_show(arr[bad])}")
    if np.any(np.diff(arr) <= 0):
        raise ParameterError(f"levels must be strictly increasing, got {arr.tolist()}")
    return arr


def check_oracle(oracle: Any, allowed: Sequence[str] = tuple(ORACLES), reason: str = "") -> str:
    """``oracle`` if it names one of ``allowed``, else :class:`~pldp.errors.ParameterError`
    (saying ``reason`` when ``oracle`` is an oracle of :data:`ORACLES` that ``allowed`` leaves out)."""
    if oracle not in allowed:
        why = f": {reason}" if reason and oracle in ORACLES else ""
        raise ParameterError(f"oracle must be one of {tuple(allowed)}, got {oracle!r}{why}")
    return str(oracle)


def make_oracle(oracle: str, epsilon: float, domain: Domain, **size: int) -> Mechanism:
    """The mechanism named ``oracle`` (see :data:`ORACLES`) at budget ``epsilon`` over ``domain``;
    ``size`` fixes a report format's parameter (OLH's ``g``, SS's ``k``) instead of its own choice."""
    return ORACLES[check_oracle(oracle)](float(epsilon), domain, **size)


def perturb_by_level(
    mechanisms: Sequence[Mechanism], items: np.ndarray, levels: np.ndarray, rng: np.random.Generator
) -> np.ndarray:
    """Every user's report by her level's mechanism, in user order (a loop over levels, none over users).

    The mechanisms must share one report format (a family and, for unary encoding, a width).
    Returns item indices (direct encoding) or bit-packed rows (unary encoding).
    """
    first = mechanisms[0]
    out: np.ndarray
    if isinstance(first, UnaryEncoding):
        out = np.empty((items.size, first.nbytes_per_report), dtype=np.uint8)
    elif isinstance(first, SupportCountOracle):  # OLH, HR, SS: the shape of the first level's reports
        empty = first.perturb(items[:0], rng)
        out = np.empty((items.size, *empty.shape[1:]), dtype=empty.dtype)
    else:
        out = np.empty(items.size, dtype=np.int64)
    for i, mech in enumerate(mechanisms):
        sel = np.flatnonzero(levels == i)
        if sel.size:
            out[sel] = mech.perturb(items[sel], rng)
    return out


def cell_users(cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The users behind a validated ``(t, d)`` table of counts per (level, item): ``(items, levels)``.

    Level-major: the users of level 0 come first, item by item. The inverse of tallying the
    true data; how the per-user path of :mod:`pldp.experiments.paths` and PLDP-FEBSF's unary
    simulation get users from counts.

    Examples
    --------
    >>> items, levels = cell_users(np.array([[1, 0, 2], [0, 1, 0]]))
    >>> items.tolist(), levels.tolist()
    ([0, 2, 2, 1], [0, 0, 0, 1])
    """
    t, d = cells.shape
    flat = cells.reshape(-1)
    return np.repeat(np.tile(np.arange(d), t), flat), np.repeat(np.repeat(np.arange(t), d), flat)


class LeveledProtocol(Protocol):
    """Budget levels, the item domain, one mechanism per level, and input checks.

    Subclasses set :attr:`mechanisms` (the mechanism of each level) in their constructor.
    """

    mechanisms: tuple[Mechanism, ...]
    #: How the level travels: ``"clear"``, ``"perturbed"`` or ``"hidden"`` (:class:`~pldp.channel.LeveledNode`).
    level_report: ClassVar[str] = "clear"

    def __init__(self, levels: Any, d: int | Domain) -> None:
        self.levels = check_levels(levels)
        self._domain = d if isinstance(d, Domain) else Domain.range(check_int(d, "d", 2))
        if len(self._domain) < 2:
            raise ParameterError(f"the domain needs at least 2 items, got {len(self._domain)}")

    @property
    def t(self) -> int:
        """Number of budget levels."""
        return int(self.levels.size)

    @property
    def domain(self) -> Domain:
        """The item domain."""
        return self._domain

    @property
    def level_claim(self) -> float | None:
        """What the protocol's paper claims for a hidden level (PLDP-FEBSF: ``eps_p``); None if nothing."""
        return None

    def level_sampler(self) -> DirectNode | None:
        """The sampler of the level report when the level is perturbed, else None."""
        return None

    def sampler(self) -> LeveledNode:
        """The sampler node: each level's mechanism's node, then the level report.

        A level that is not sent in the clear is claimed at what the whole report protects it at
        (:meth:`~pldp.channel.LeveledNode.level_ratio`, rounded up to 6 decimals; ERRATA FEBSF-6).
        """
        return self._node

    @cached_property
    def _node(self) -> LeveledNode:
        levels = tuple(float(e) for e in self.levels)
        items = tuple(m.sampler() for m in self.mechanisms)
        if self.level_report == "clear":
            return LeveledNode(self.d, levels, items, "clear")
        level = self.level_sampler()
        num, den = LeveledNode(self.d, levels, items, self.level_report, level, float("inf")).level_ratio()
        return LeveledNode(self.d, levels, items, self.level_report, level, epsilon_ceiling(num, den))

    @staticmethod
    def _params_levels(params: dict[str, Any]) -> tuple[np.ndarray, Domain]:
        """The levels and the domain of a leveled protocol's parameters."""
        return epsilons_of(params["levels"]), domain_of(params["labels"])

    def _base_params(self) -> dict[str, Any]:
        """The parameters every leveled protocol has: its class, the labels and the levels."""
        return {"protocol": type(self).__name__, "labels": canonical_labels(self.domain.labels), "levels": self.levels}

    def _check_users(self, items: Any, levels: Any) -> tuple[np.ndarray, np.ndarray]:
        """``(items, levels)`` as int64 arrays of one entry per user, each in its range."""
        x = np.asarray(items)
        lv = np.asarray(levels)
        if x.ndim != 1 or lv.shape != x.shape:
            raise ParameterError(f"items and levels must be 1-D arrays of equal length, got {x.shape} and {lv.shape}")
        if x.size and (x.dtype.kind not in "iu" or lv.dtype.kind not in "iu"):
            raise ParameterError(f"items and levels must be integer indices, got dtypes {x.dtype} and {lv.dtype}")
        check_index_range(lv, self.t, "level indices")
        check_index_range(x, self.d, "items")
        return x.astype(np.int64), lv.astype(np.int64)

    def _check_cells(self, cells: Any) -> np.ndarray:
        """``cells`` as a ``(t, d)`` int64 table of true counts per (level, item)."""
        c = np.asarray(cells)
        if c.shape != (self.t, self.d):
            raise ParameterError(f"cells must have shape (t, d) = ({self.t}, {self.d}), got {c.shape}")
        return as_counts(c.reshape(-1), "cells").reshape(self.t, self.d)

    def _pooled_tally(self, tallies: Sequence[Tally]) -> Tally:
        """One tally of the pooled reports of all levels (the server cannot tell the levels apart),
        with this protocol's fingerprint."""
        counts = np.sum([t.counts for t in tallies], axis=0)
        return Tally(sum(t.n for t in tallies), counts, tallies[0].kind, self.fingerprint)

    def _level_privacy(self) -> ComposedPrivacy:
        """Each level's mechanism checked exactly; a user runs one of them (parallel composition).

        A user at level ``tau`` runs ``mechanisms[tau]`` only, so she is
        :math:`\\varepsilon_\\tau`-LDP exactly when that part holds.
        """
        parts = {
            f"level {i} (eps={e:g})": m.privacy()
            for i, (e, m) in enumerate(zip(self.levels, self.mechanisms, strict=True))
        }
        return ComposedPrivacy("LDP at each user's level", parts, "max")

    def privacy(self) -> ComposedPrivacy:
        """Exact check of every level's mechanism (see :meth:`_level_privacy`)."""
        return self._level_privacy()


class HiddenLevels(LeveledProtocol):
    """A leveled protocol whose reports do not carry the level: the server tallies them pooled.

    Each user sends only her level's mechanism's report (PBP, PPDA), so every level's
    mechanism must share one report format; the tally is one :class:`~pldp.tally.Tally` of all
    reports, with the protocol's fingerprint.
    """

    level_report = "hidden"

    def perturb(self, items: Any, levels: Any, rng: np.random.Generator) -> np.ndarray:
        """Each user perturbs her item with her level's mechanism; only the reports are sent, in user order.

        Returns item indices (k-RR) or bit-packed unary rows (OUE, RAPPOR), as the mechanisms do.
        """
        x, lv = self._check_users(items, levels)
        return perturb_by_level(self.mechanisms, x, lv, rng)

    def tally(self, reports: Any) -> Tally:
        """Support counts of all reports (no level information): a plain :class:`~pldp.tally.Tally`;
        unary reports also give the histogram of ones and the tail counts for detection, with the
        tail region of every level (:meth:`report_stats`)."""
        first = self.mechanisms[0]
        pooled = self._pooled_tally([first.tally(reports)])
        if not isinstance(first, UnaryEncoding):
            return pooled
        return pooled.with_report_stats(*self.report_stats(first._check_reports(reports)))

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        """The payload columns of the reports: the levels' mechanisms' own (one format, no level column)."""
        return self.mechanisms[0].report_columns(reports)

    def reports_from_columns(self, columns: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """The reports of payload columns, as the levels' mechanisms read them."""
        return self.mechanisms[0].reports_from_columns(columns)

    def level_weights(self) -> np.ndarray | None:
        """The shares of the levels if public (PBP), else None."""
        return None

    @cached_property
    def ones_laws(self) -> UnaryLaws:
        """Unary levels: the honest laws of a report's number of ones, per level, weighted by the
        public shares when there are (:meth:`level_weights`)."""
        known = self.level_weights()
        weights = np.full(self.t, 1.0 / self.t) if known is None else known
        comps = [(float(w), m.support[0], m.support[1]) for w, m in zip(weights, self.mechanisms, strict=True)]
        return UnaryLaws.of(comps, weights_known=known is not None)

    @cached_property
    def tail_region(self) -> np.ndarray:
        """Numbers of ones in the tally region (:func:`~pldp.estimation.detect.tally_region`) at every level."""
        return tally_region(self.ones_laws)

    def report_stats(self, rows: np.ndarray) -> tuple[np.ndarray, dict[int, np.ndarray]]:
        """The histogram of ones of packed reports and their tail counts (every level's tail region)."""
        return unary_report_stats(rows, self.mechanisms[0].d, self.tail_region)
