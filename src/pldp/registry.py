"""One registry of the oracles pldp can rebuild from their parameters: name -> class.

Every mechanism and protocol names itself in its canonical parameters
(``params()["mechanism"]`` or ``params()["protocol"]``: its class name) and rebuilds itself with
``Class.from_params(params)``. Classes join the registry with the :func:`register` decorator
where they are defined; a campaign spec names its oracle by those parameters, and the collector
rebuilds it with :func:`oracle_from_params`, which checks that the rebuilt oracle's parameters
are exactly the given ones (thresholds included), so a spec cannot describe an oracle pldp would
not build. A researcher's own oracle joins the same way (``@register`` on the class).

pldp's own classes are found by name without importing every oracle first: :data:`BUILTIN` says
in which module each one is defined, and :func:`oracle_class` imports that module (which
registers the class) the first time its name is asked for. A client that reads a k-RR spec thus
loads the direct mechanisms, not the protocols, the estimators of every family or scipy's
optimizers. ``tests/test_channel.py`` checks the table against the classes that register.
"""

from __future__ import annotations

import importlib
from typing import Any, TypeVar

from pldp.errors import PLDPError, SpecError
from pldp.fingerprint import canonical
from pldp.oracle import FrequencyOracle

__all__ = ["oracle_class", "oracle_from_params", "register", "registered"]

C = TypeVar("C", bound=type[FrequencyOracle])

_CLASSES: dict[tuple[str, str], type[FrequencyOracle]] = {}

_MECHANISMS = "pldp.mechanisms"
_PROTOCOLS = "pldp.protocols"
#: Where each of pldp's own oracle classes is defined: (params key, class name) -> module.
BUILTIN: dict[tuple[str, str], str] = {
    **{("mechanism", name): f"{_MECHANISMS}.direct" for name in ("DirectEncoding", "KRR", "URR", "IPRR")},
    **{("mechanism", name): f"{_MECHANISMS}.unary" for name in ("UnaryEncoding", "RAPPOR", "OUE", "IDUE")},
    **{("mechanism", name): f"{_MECHANISMS}.longitudinal.direct" for name in ("LongitudinalDirect", "LGRR", "LIPRR")},
    **{
        ("mechanism", name): f"{_MECHANISMS}.longitudinal.unary"
        for name in ("LongitudinalUnary", "LOUE", "LOSUE", "LSUE", "LSOUE", "LIDUE")
    },
    ("protocol", "PaddingSampling"): f"{_PROTOCOLS}.padding",
    ("protocol", "FEBSF"): f"{_PROTOCOLS}.febsf.protocol",
    ("protocol", "RCF"): f"{_PROTOCOLS}.rcf",
    ("protocol", "APLDP"): f"{_PROTOCOLS}.apldp",
    ("protocol", "PBP"): f"{_PROTOCOLS}.pbp",
    ("protocol", "PPDA"): f"{_PROTOCOLS}.ppda",
    ("protocol", "MPLDP"): f"{_PROTOCOLS}.mpldp",
    ("protocol", "LLevels"): f"{_PROTOCOLS}.llevels",
}


def register(cls: C) -> C:
    """Class decorator: rebuild ``cls`` from parameters naming it (``params_key``: its class name).

    Raises
    ------
    TypeError
        Another class is registered under the same name.
    """
    key = (cls.params_key, cls.__name__)
    if _CLASSES.setdefault(key, cls) is not cls:
        raise TypeError(f"another class is registered as the {key[0]} {key[1]!r}")
    return cls


def _load(key: tuple[str, str]) -> type[FrequencyOracle] | None:
    """The class registered under ``key``, importing its module first where it is one of pldp's own."""
    if key not in _CLASSES and key in BUILTIN:
        importlib.import_module(BUILTIN[key])
    return _CLASSES.get(key)


def registered() -> dict[str, type[FrequencyOracle]]:
    """Every registered class by name: pldp's own (each module imported) and any registered since."""
    for key in BUILTIN:
        _load(key)
    return {name: cls for (_, name), cls in sorted(_CLASSES.items())}


def oracle_class(params: dict[str, Any]) -> type[FrequencyOracle]:
    """The class that ``params`` names (:class:`~pldp.errors.SpecError` if none)."""
    for key in ("mechanism", "protocol"):
        if key in params:
            name = params[key]
            cls = _load((key, name)) if isinstance(name, str) else None
            if cls is None:
                raise SpecError(f"unknown {key} {name!r}")
            return cls
    raise SpecError("oracle parameters name neither a 'mechanism' nor a 'protocol'")


def oracle_from_params(params: dict[str, Any]) -> FrequencyOracle:
    """The oracle whose :meth:`~pldp.FrequencyOracle.params` are exactly ``params``.

    Raises
    ------
    SpecError
        Unknown mechanism or protocol, parameters pldp refuses, or parameters that are not the
        canonical ones of the oracle they build (e.g. a threshold changed by hand).

    Examples
    --------
    >>> import pldp
    >>> oracle_from_params(pldp.KRR(1.0, 3).params()) == pldp.KRR(1.0, 3)
    True
    """
    if not isinstance(params, dict):
        raise SpecError(f"oracle parameters must be an object, got {type(params).__name__}")
    try:
        oracle = oracle_class(params).from_params(params)
    except SpecError:
        raise
    except (PLDPError, KeyError, TypeError, ValueError) as exc:
        raise SpecError(f"cannot build the oracle from its parameters: {type(exc).__name__}: {exc}") from None
    got, want = canonical(oracle.params()), canonical(params)
    if got != want:
        diff = sorted(k for k in set(got) | set(want) if got.get(k) != want.get(k))
        raise SpecError(f"the oracle parameters are not the canonical ones pldp builds; they differ in {diff}")
    return oracle
