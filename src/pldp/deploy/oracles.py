"""Rebuild a pldp oracle from its canonical parameters (:meth:`pldp.FrequencyOracle.params`).

A spec names its oracle by those parameters; the collector rebuilds the oracle from them to tally
and estimate. :func:`oracle_from_params` constructs it and then checks that the rebuilt oracle's
parameters equal the given ones exactly (thresholds included), so a spec cannot describe an
oracle pldp would not build. IDUE is rebuilt from its stated thresholds, never re-solved.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.budgets import ItemBudgets
from pldp.domain import Domain
from pldp.errors import PLDPError, SpecError
from pldp.fingerprint import canonical
from pldp.oracle import FrequencyOracle

__all__ = ["oracle_from_params", "relabel"]


def _domain(labels: Any) -> Domain:
    if isinstance(labels, dict) and set(labels) == {"range"}:
        return Domain.range(int(labels["range"]))
    if isinstance(labels, list) and all(isinstance(x, (str, int, float, bool)) for x in labels):
        return Domain(labels)
    raise SpecError(f"labels must be {{'range': d}} or a list of strings or numbers, got {labels!r}")


def _eps(values: Any) -> np.ndarray:
    return np.array([np.inf if v == "inf" else float(v) for v in values], dtype=float)


def _budgets(params: dict[str, Any]) -> ItemBudgets:
    return ItemBudgets(_eps(params["epsilons"]), _domain(params["labels"]))


def _mechanism(params: dict[str, Any]) -> FrequencyOracle:
    from pldp.mechanisms import IDUE, IPRR, KRR, OUE, RAPPOR, URR, DirectEncoding, UnaryEncoding

    name = params["mechanism"]
    if name in ("KRR", "RAPPOR", "OUE"):
        eps = _eps(params["epsilons"])
        if name == "KRR":
            return KRR(float(eps[0]), _domain(params["labels"]))
        return (RAPPOR if name == "RAPPOR" else OUE)(float(eps[0]), _domain(params["labels"]))
    if name == "URR":
        eps = _eps(params["epsilons"])
        sens = np.isfinite(eps)
        return URR(float(eps[sens][0]) if sens.any() else 1.0, sens, _domain(params["labels"]))
    if name == "IPRR":
        return IPRR(_budgets(params))
    if name == "DirectEncoding":
        return DirectEncoding(_budgets(params), params["notion"])
    if name == "IDUE":
        return IDUE.from_thresholds(
            params["a_threshold"],
            params["b_threshold"],
            int(params["coin_bits"]),
            _budgets(params),
            params["model"],
            params["pair_rule"],
        )
    if name == "UnaryEncoding":
        scale = 2.0 ** int(params["coin_bits"])
        a = np.asarray(params["a_threshold"], dtype=float) / scale
        b = np.asarray(params["b_threshold"], dtype=float) / scale
        return UnaryEncoding(a, b, _budgets(params), params["pair_rule"], coin_bits=int(params["coin_bits"]))
    raise SpecError(f"unknown mechanism {name!r}")


def _protocol(params: dict[str, Any]) -> FrequencyOracle:
    from pldp.mechanisms.direct import DirectEncoding
    from pldp.protocols import APLDP, FEBSF, MPLDP, PBP, PPDA, RCF, PaddingSampling

    name = params["protocol"]
    if name == "PaddingSampling":
        base = oracle_from_params(params["base"])
        return PaddingSampling(base, int(params["ell"]))  # type: ignore[arg-type]
    if name == "MPLDP":
        return MPLDP(params["k"], _eps(params["eps"]), _eps(params["level_fractions"]))
    levels = _eps(params["levels"])
    dom = _domain(params["labels"])
    if name == "FEBSF":
        lm = params["level_mechanism"]
        level_mech = oracle_from_params(lm) if lm is not None else None
        if level_mech is not None and not isinstance(level_mech, DirectEncoding):
            raise SpecError("FEBSF's level mechanism must be a direct encoding")
        return FEBSF(levels, float(params["eps_p"]), dom, params["oracle"], level_mech)
    if name == "RCF":
        oracles = set(params["oracles"])
        if len(oracles) != 1:
            raise SpecError("RCF uses one oracle at every level")
        return RCF(levels, dom, oracles.pop())
    if name == "APLDP":
        return APLDP(levels, dom, params["candidates"])
    if name == "PBP":
        return PBP(levels, np.asarray(params["rho"], dtype=float), dom, params["oracle"])
    if name == "PPDA":
        return PPDA(levels, dom, int(params["extra_bits"]), params["oracle"], params["calibration"])
    raise SpecError(f"unknown protocol {name!r}")


def oracle_from_params(params: dict[str, Any]) -> FrequencyOracle:
    """The oracle whose :meth:`~pldp.FrequencyOracle.params` are exactly ``params``.

    Raises
    ------
    SpecError
        Unknown mechanism or protocol, parameters pldp refuses, or parameters that are not the
        canonical ones of the oracle they build (e.g. a threshold changed by hand).
    """
    if not isinstance(params, dict):
        raise SpecError(f"oracle parameters must be an object, got {type(params).__name__}")
    try:
        if "mechanism" in params:
            oracle = _mechanism(params)
        elif "protocol" in params:
            oracle = _protocol(params)
        else:
            raise SpecError("oracle parameters name neither a 'mechanism' nor a 'protocol'")
    except SpecError:
        raise
    except (PLDPError, KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"cannot build the oracle from its parameters: {type(exc).__name__}: {exc}") from None
    got, want = canonical(oracle.params()), canonical(params)
    if got != want:
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        raise SpecError(f"the oracle parameters are not the canonical ones pldp builds; they differ in {diff}")
    return oracle


def relabel(params: dict[str, Any], labels: list[str]) -> dict[str, Any]:
    """``params`` with the item labels replaced (also in a padding protocol's base)."""
    out = dict(params)
    if "labels" in out:
        out["labels"] = list(labels)
    if "base" in out:
        out["base"] = relabel(out["base"], labels)
    return out
