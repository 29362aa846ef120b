"""Exact privacy checks: one interface (:class:`PrivacyCheck`) for every notion pldp implements.

* :class:`PrivacyReport`: per-output checks of direct-encoding channels (IPLDP, ULDP, LDP);
* :class:`PairPrivacyReport`: pairwise checks of unary encodings (MinID-LDP, AvgID-LDP, LDP);
* :class:`ItemSetPrivacyReport`: padding-and-sampling on item-sets (Gu et al. Theorem 4);
* :class:`ComposedPrivacy`: protocols made of several mechanisms;
* :class:`LongitudinalPrivacy`: memoized chains, :math:`\\varepsilon_\\infty` over any number of
  reports of one value and :math:`\\varepsilon_1` per report;
* :func:`over_rounds`, :class:`RoundsPrivacy`, :func:`pair_loss`: a memoized chain over a device's
  whole history of ``r`` reports, the values changing or not (exact where feasible, else bounded);
  :func:`history_bound`, the bound alone, for any number of reports;
* :func:`level_protection`, :class:`LevelProtection`: how well a hidden budget level is protected
  by the whole report (PLDP-FEBSF, PBP, PPDA; ERRATA FEBSF-6), and :class:`FEBSFPrivacy`,
  PLDP-FEBSF's report, which carries it.

The names beyond :mod:`pldp.privacy.base` are imported on first use (:mod:`pldp._lazy`): a device's
ledger needs the base's composition only.
"""

from typing import TYPE_CHECKING

from pldp._lazy import lazy_names
from pldp.privacy.base import TOLERANCE, ComposedPrivacy, PrivacyCheck

if TYPE_CHECKING:
    from pldp.privacy.channel import PrivacyReport, check_channel, report_from_columns
    from pldp.privacy.itemsets import ItemSetPrivacyReport
    from pldp.privacy.levels import FEBSFPrivacy, LevelProtection, level_protection
    from pldp.privacy.longitudinal import LongitudinalPrivacy
    from pldp.privacy.pairs import PairPrivacyReport, pair_budgets
    from pldp.privacy.rounds import RoundsPrivacy, history_bound, over_rounds, pair_loss

#: Where each name beyond the base is defined.
_LAZY = {
    **{name: "pldp.privacy.channel" for name in ("PrivacyReport", "check_channel", "report_from_columns")},
    "ItemSetPrivacyReport": "pldp.privacy.itemsets",
    **{name: "pldp.privacy.levels" for name in ("FEBSFPrivacy", "LevelProtection", "level_protection")},
    "LongitudinalPrivacy": "pldp.privacy.longitudinal",
    **{name: "pldp.privacy.pairs" for name in ("PairPrivacyReport", "pair_budgets")},
    **{name: "pldp.privacy.rounds" for name in ("RoundsPrivacy", "history_bound", "over_rounds", "pair_loss")},
}

__all__ = [
    "TOLERANCE",
    "ComposedPrivacy",
    "FEBSFPrivacy",
    "ItemSetPrivacyReport",
    "LevelProtection",
    "LongitudinalPrivacy",
    "PairPrivacyReport",
    "PrivacyCheck",
    "PrivacyReport",
    "RoundsPrivacy",
    "check_channel",
    "history_bound",
    "level_protection",
    "over_rounds",
    "pair_budgets",
    "pair_loss",
    "report_from_columns",
]

__getattr__, __dir__ = lazy_names(__name__, _LAZY, __all__)
