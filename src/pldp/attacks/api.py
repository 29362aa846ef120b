"""The attacks' entry points: :func:`fake_reports`, :func:`promoted`, :func:`gain`, :func:`expected_gain`."""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp._validation import check_int
from pldp.attacks.atoms import atoms_of, fakes_of
from pldp.attacks.base import Attack, rule_of
from pldp.attacks.optimal import search, split_reports
from pldp.errors import ParameterError

__all__ = ["expected_gain", "fake_reports", "gain", "gain_is_exact", "promoted", "shift"]


def _attack(
    oracle: Any, targets: Any, strategy: str, level: int | None, shares: Any, defence: str | None, split: Any = None
) -> Attack:
    rule = rule_of(oracle)
    if strategy == "optimal":
        rule.check(oracle, "mga")
        atoms_of(oracle)  # refuses the families it does not search
    else:
        rule.check(oracle, strategy)
        if split is not None:
            raise ParameterError(f"split= is for strategy 'optimal', not {strategy!r}")
    if level is not None and strategy != "level":
        raise ParameterError(f"level= is for strategy 'level', not {strategy!r}")
    chosen = rule.promoted(oracle, targets, strategy)
    sh = None if shares is None else np.asarray(shares, dtype=float)
    sp = None if split is None else np.asarray(split)
    return Attack(chosen, strategy, level, sh, defence, sp)


def fake_reports(
    oracle: Any,
    targets: Any,
    m: int,
    *,
    rng: np.random.Generator,
    strategy: str = "mga",
    level: int | None = None,
    shares: Any = None,
    defence: str | None = None,
    split: Any = None,
    search_options: dict[str, Any] | None = None,
) -> Any:
    """What ``m`` fake users send to promote ``targets``: exactly what ``oracle.perturb`` returns for
    ``m`` users (same types, dtypes and shapes), so ``oracle.tally`` takes it and the tally merges
    with the honest users' (:meth:`pldp.tally.BaseTally.merge`).

    Parameters
    ----------
    oracle : FrequencyOracle
        Any shipped mechanism or protocol.
    targets : array_like of int
        Item indices to promote (distinct, at least one). MPLDP: one array per attribute (empty for
        an attribute not attacked), or one flat array for attribute 0.
    m : int
        Number of fake users (``>= 0``).
    rng : numpy.random.Generator
    strategy : str
        ``"mga"`` (Cao et al.'s maximal gain attack), ``"adaptive"`` (MGA whose reports pass a test
        of their number of ones and whose level claims follow the honest shares), ``"input"`` (the
        honest randomizer run on a target: the weakest baseline), ``"min_level"``, ``"max_level"``,
        ``"level"`` (user-level protocols: claim that level and report MGA-style at it),
        ``"sensitive"`` (item-personalized mechanisms: MGA on the items of the smallest budgets, as
        many as ``targets`` holds; see :func:`promoted`) or ``"knows_defence"`` (an attacker who
        knows the robust estimators: claims spread so that every level's estimate moves alike,
        which no robust combination of the levels can clip; honest ones counts, which detection
        cannot flag; direct-encoding reports that support non-targets at the honest rate, which
        leaves a recovery in the manner of LDPRecover nothing to read the fakes' share from),
        or ``"optimal"`` (an attacker who knows the estimator ``defence`` and searches, on shadow
        tallies it draws from ``rng``, the split of its fakes over the claimed levels (and, at a
        unary level, between MGA-style reports and reports with the target bits alone), or for a
        single mechanism over the report strategies, that moves the targets most:
        :mod:`pldp.attacks.optimal`; MPLDP: over (attribute, level) claims, every attribute's
        row holding the ``m`` fakes; not padding-and-sampling).
        :mod:`pldp.attacks.pure` and :mod:`pldp.attacks.leveled` say exactly what each does per
        family.
    level : int, optional
        The claimed level's index, for ``strategy="level"``.
    shares : array_like, optional
        The honest users' level shares the attacker assumes (``"adaptive"``, ``"input"``,
        ``"knows_defence"``); default PBP's public ``rho``, MPLDP's ``level_shares``, else uniform.
    defence : str, optional
        The defence ``"knows_defence"`` answers, where a family has several: for the user-level
        protocols, ``"recover"`` makes the reports at the claimed levels also support non-targets
        at the honest rate (as a single mechanism's ``knows_defence`` always does); by default they
        answer ``"robust"`` and ``"detect"`` (claims that move every level alike, honest ones
        counts). For ``"optimal"``: the estimation method searched against (default
        ``"unbiased"``).
    split : array_like of int, optional
        ``"optimal"`` only: fakes per atom (:func:`pldp.attacks.optimal.atoms_of`), skipping the
        search (MPLDP: the ``(attributes, levels)`` table, flat or not, each row holding ``m``;
        a levelled protocol with unary levels also takes ``t`` counts, every fake MGA-style).
    search_options : dict, optional
        ``"optimal"`` only: keyword arguments of :func:`pldp.attacks.optimal.search`
        (``population``, ``options`` of the estimator, ``chunks``, ``shadows``, ``passes``,
        ``spread``, ``shares``).

    Returns
    -------
    What ``oracle.perturb`` returns: item indices, bit-packed rows, or the protocol's reports
    (:class:`~pldp.protocols.FEBSFReports`, :class:`~pldp.protocols.GroupedReports`,
    :class:`~pldp.protocols.MPLDPReports`).

    Raises
    ------
    ParameterError
        Bad targets, ``m``, level or shares, an unknown strategy, or one that does not apply to
        the oracle (a level claim for a mechanism, ``"sensitive"`` for a protocol without item
        budgets).

    Examples
    --------
    >>> import numpy as np, pldp
    >>> from pldp.attacks import fake_reports
    >>> oue = pldp.OUE(1.0, 16)
    >>> fake = fake_reports(oue, [15], 3, rng=np.random.default_rng(0))
    >>> fake.shape, oue.unpack(fake).sum(axis=1).tolist(), bool(oue.unpack(fake)[:, 15].all())
    ((3, 2), [5, 5, 5], True)
    >>> honest = oue.simulate([500] * 16, np.random.default_rng(1))
    >>> (honest + oue.tally(fake)).n
    8003
    """
    m = check_int(m, "m", 0)
    if not isinstance(rng, np.random.Generator):
        raise ParameterError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    attack = _attack(oracle, targets, strategy, level, shares, defence, split)
    if strategy == "optimal":
        if split is None:
            if not m:
                split = np.zeros(len(atoms_of(oracle)), dtype=np.int64)
            else:
                opts = {"shares": shares, **(search_options or {})}
                split = search(oracle, targets, m, rng=rng, defence=defence or "unbiased", **opts).counts
        if fakes_of(oracle, split) != m:
            raise ParameterError(f"split= must hold the {m} fakes, got {fakes_of(oracle, split)}")
        return split_reports(oracle, targets, np.asarray(split), rng)
    return rule_of(oracle).reports(oracle, attack, m, rng)


def promoted(oracle: Any, targets: Any, strategy: str = "mga") -> Any:
    """The items a strategy's fakes promote: ``targets`` checked, or for ``"sensitive"`` the items of
    the smallest budgets, as many as ``targets`` holds (MPLDP: one array per attribute).

    Examples
    --------
    >>> import numpy as np, pldp
    >>> iprr = pldp.IPRR(pldp.ItemBudgets.from_array([1.0, 0.1, 0.5, np.inf]))
    >>> promoted(iprr, [3], "sensitive").tolist()
    [1]
    """
    rule = rule_of(oracle)
    if strategy == "optimal":  # promotes the targets themselves, as MGA
        rule.check(oracle, "mga")
        atoms_of(oracle)
        return rule.promoted(oracle, targets, "mga")
    rule.check(oracle, strategy)
    return rule.promoted(oracle, targets, strategy)


def shift(oracle: Any, honest: Any, fake: Any, method: str = "unbiased", **options: Any) -> Any:
    """The estimate from the honest and fake reports' tallies merged, minus the honest estimate,
    item by item (MPLDP: a tuple, one array per attribute). ``options`` go to ``oracle.estimate``."""
    return rule_of(oracle).shift(oracle, honest, honest + fake, method, options)


def gain(oracle: Any, honest: Any, fake: Any, targets: Any, method: str = "unbiased", **options: Any) -> float:
    """The frequency gain of ``targets``: the sum over them of :func:`shift`.

    Parameters
    ----------
    oracle : FrequencyOracle
    honest, fake : tally
        The honest users' tally and the fakes' (``oracle.tally(fake_reports(...))``).
    targets : array_like of int
        The items measured (the promoted ones: :func:`promoted`); MPLDP: one array per attribute.
    method : str
        Any estimation method of the oracle.

    Raises
    ------
    EstimationError
        When the estimator refuses either tally (e.g. PLDP-FEBSF's AUEM under a level attack).

    Examples
    --------
    Cao et al.'s MGA against k-RR: the measured gain and the closed form.

    >>> import numpy as np, pldp
    >>> from pldp.attacks import expected_gain, fake_reports, gain
    >>> krr, rng = pldp.KRR(1.0, 16), np.random.default_rng(2)
    >>> counts = np.full(16, 6250)
    >>> honest = krr.simulate(counts, rng)
    >>> fake = krr.tally(fake_reports(krr, [15], 1010, rng=rng))
    >>> round(gain(krr, honest, fake, [15]), 2), round(expected_gain(krr, [15], 1010, counts), 2)
    (0.1, 0.1)
    """
    return rule_of(oracle).gain(oracle, honest, fake, targets, method, options)


def expected_gain(
    oracle: Any,
    targets: Any,
    m: int,
    *data: Any,
    strategy: str = "mga",
    level: int | None = None,
    shares: Any = None,
    defence: str | None = None,
    split: Any = None,
) -> float | None:
    """The expected gain of the ``"unbiased"`` estimate in closed form, when ``m`` fakes of
    ``strategy`` join the honest users of ``data`` (what ``oracle.simulate`` takes); ``level``,
    ``shares`` and ``defence`` as for :func:`fake_reports`. ``"optimal"`` needs ``split=`` (the
    counts of a :func:`pldp.attacks.optimal.search`): the expected gain of that fixed split.

    Exact for the pure mechanisms (:func:`pldp.robustness.support_gain`; Cao et al.'s theorems for
    k-RR and OUE), padding-and-sampling, PBP, and RCF, APLDP and MPLDP (their weights recomputed,
    :func:`pldp.robustness.combined_gain`) when the claimed levels' counts are fixed; to first
    order for ``"adaptive"`` and ``"input"`` claims of RCF, APLDP and MPLDP (the expected counts) and
    for PLDP-FEBSF (AUEM at the expected counts; NaN where AUEM has no estimate). None for PPDA.
    """
    m = check_int(m, "m", 0)
    attack = _attack(oracle, targets, strategy, level, shares, defence, split)
    if strategy == "optimal":
        if split is None or fakes_of(oracle, split) != m:
            raise ParameterError(f"expected_gain of strategy 'optimal' needs split= holding the {m} fakes")
        from pldp.attacks.optimal import split_expected_gain

        return split_expected_gain(oracle, attack, m, tuple(data))
    return rule_of(oracle).expected_gain(oracle, attack, m, tuple(data))


def gain_is_exact(oracle: Any, strategy: str = "mga") -> bool:
    """Whether :func:`expected_gain` is the exact expectation for ``strategy`` (else a first-order
    value, or None for PPDA)."""
    rule = rule_of(oracle)
    if strategy == "optimal":  # a fixed split: as exact as the family's fixed claims
        rule.check(oracle, "mga")
        atoms_of(oracle)
        return rule.exact(Attack(np.empty(0, dtype=np.int64), "mga"))
    rule.check(oracle, strategy)
    return rule.exact(Attack(np.empty(0, dtype=np.int64), strategy))
