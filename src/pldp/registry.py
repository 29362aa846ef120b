"""One registry of the oracles pldp can rebuild from their parameters: name -> class.

Every mechanism and protocol names itself in its canonical parameters
(``params()["mechanism"]`` or ``params()["protocol"]``: its class name) and rebuilds itself with
``Class.from_params(params)``. Classes join the registry with the :func:`register` decorator
where they are defined; a campaign spec names its oracle by those parameters, and the collector
rebuilds it with :func:`oracle_from_params`, which checks that the rebuilt oracle's parameters
are exactly the given ones (thresholds included), so a spec cannot describe an oracle pldp would
not build. A researcher's own oracle joins the same way (``@register`` on the class).

pldp's own classes are found by name without importing every oracle first: :data:`ENTRIES` (and
:data:`BUILTIN`, its name -> module table) says in which module each one is defined, and
:func:`oracle_class` imports that module (which registers the class) the first time its name is
asked for. A client that reads a k-RR spec thus
loads the direct mechanisms, not the protocols, the estimators of every family or scipy's
optimizers. ``tests/test_startup.py`` checks the table against the classes that register.

:data:`ENTRIES` is pldp's one list of oracles: the CLI's mechanism names and options
(:mod:`pldp.cli.options`), the audit catalog (:mod:`pldp.audit.catalog`), the deployment tests'
cases and the docs' table of oracles (``docs/oracles.md``) are derived from it, and
``tests/test_registry.py`` checks that each of them covers every entry.
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from pldp.errors import PLDPError, SpecError
from pldp.fingerprint import canonical
from pldp.oracle import FrequencyOracle

__all__ = ["BUILTIN", "ENTRIES", "Entry", "entry", "oracle_class", "oracle_from_params", "register", "registered"]

C = TypeVar("C", bound=type[FrequencyOracle])

_CLASSES: dict[tuple[str, str], type[FrequencyOracle]] = {}

_MECHANISMS = "pldp.mechanisms"
_PROTOCOLS = "pldp.protocols"
_LONGITUDINAL = f"{_MECHANISMS}.longitudinal"


@dataclass(frozen=True)
class Entry:
    """One of pldp's own oracle classes, as its consumers know it without importing it.

    The CLI's mechanism options, the audit catalog, the deployment tests and the docs' table of
    oracles are derived from :data:`ENTRIES`; what needs the class itself (its constructor's
    parameters, its summary) is read from the class on first use.

    Attributes
    ----------
    name : str
        The class name, as its parameters name it.
    family : {"mechanism", "protocol"}
        Its ``params_key``: a mechanism (``pldp.X``) or a protocol (``pldp.protocols.X``).
    module : str
        The module that defines (and registers) it.
    generic : bool
        A shared core built from probabilities or from another oracle (``DirectEncoding``,
        ``LongitudinalUnary``, ...), not a named mechanism: no CLI name, no catalog row of its own
        (its named subclasses stand for it).
    deployable : bool
        Whether a campaign spec can run it (:meth:`pldp.deploy.Spec.from_mechanism`).
    """

    name: str
    family: Literal["mechanism", "protocol"]
    module: str
    generic: bool = False
    deployable: bool = True

    @property
    def key(self) -> tuple[str, str]:
        """``(family, name)``: the key of :data:`BUILTIN`."""
        return (self.family, self.name)

    @property
    def cli_name(self) -> str | None:
        """The name ``pldp mechanism show`` and ``pldp audit`` take (``krr``), or ``None``: only the
        named mechanisms have one."""
        return None if self.generic or self.family != "mechanism" else self.name.lower()

    def load(self) -> type[FrequencyOracle]:
        """The class (importing its module).

        Raises
        ------
        LookupError
            The module registers no class of that name (the table is wrong).
        """
        cls = _load(self.key)
        if cls is None:
            raise LookupError(f"{self.module} registers no {self.family} {self.name!r}")
        return cls

    def summary(self) -> str:
        """The summary of the class docstring, its first paragraph on one line (its module imported)."""
        return " ".join((self.load().__doc__ or "").strip().split("\n\n", 1)[0].split())

    @property
    def one_budget(self) -> bool:
        """Whether it is a named mechanism built as ``cls(epsilon, d)``: one budget over ``d`` items, any
        other parameter with a default (KRR, RAPPOR, OUE, OLH, HR, SS, CMS, HCMS). Such a mechanism's standard
        configurations (the audit catalog's, :func:`pldp.testing.standard_cases`') follow from that
        alone, with no entry of its own in their tables."""
        if self.generic or self.family != "mechanism":
            return False
        params = list(self.parameters().values())
        rest_default = all(p.default is not inspect.Parameter.empty for p in params[2:])
        return [p.name for p in params[:2]] == ["epsilon", "d"] and rest_default

    def parameters(self) -> dict[str, inspect.Parameter]:
        """The constructor's named parameters (no ``self``, no ``*args``/``**kwargs``)."""
        params = inspect.signature(self.load().__init__).parameters.values()
        kinds = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        return {p.name: p for p in params if p.name != "self" and p.kind in kinds}


def _entries(module: str, *names: str, family: Literal["mechanism", "protocol"] = "mechanism") -> list[Entry]:
    """The entries of ``names``, defined in ``module``; a name starting with ``*`` is a generic core."""
    return [Entry(n.lstrip("*"), family, module, generic=n.startswith("*")) for n in names]


#: pldp's own oracle classes, in the order they are listed (CLI, catalog, docs).
ENTRIES: tuple[Entry, ...] = (
    *_entries(f"{_MECHANISMS}.direct", "*DirectEncoding", "KRR", "URR", "IPRR"),
    *_entries(f"{_MECHANISMS}.unary", "*UnaryEncoding", "RAPPOR", "OUE", "IDUE"),
    *_entries(f"{_MECHANISMS}.uldp", "URAP"),
    *_entries(f"{_MECHANISMS}.hashed", "OLH"),
    *_entries(f"{_MECHANISMS}.hadamard", "HR"),
    *_entries(f"{_MECHANISMS}.subset", "SS"),
    *_entries(f"{_MECHANISMS}.sketch", "CMS", "HCMS"),
    *_entries(f"{_LONGITUDINAL}.direct", "*LongitudinalDirect", "LGRR"),
    *_entries(f"{_LONGITUDINAL}.unary", "*LongitudinalUnary", "LOUE", "LOSUE", "LSUE", "LSOUE"),
    *_entries(f"{_LONGITUDINAL}.direct", "LIPRR"),
    *_entries(f"{_LONGITUDINAL}.unary", "LIDUE"),
    *_entries(f"{_PROTOCOLS}.padding", "PaddingSampling", family="protocol"),
    *_entries(f"{_PROTOCOLS}.febsf.protocol", "FEBSF", family="protocol"),
    *(Entry(name, "protocol", f"{_PROTOCOLS}.{name.lower()}") for name in ("RCF", "APLDP", "PBP", "PPDA", "MPLDP")),
    # the clients' memo keeps one permanent response per value, not per (level, value)
    Entry("LLevels", "protocol", f"{_PROTOCOLS}.llevels", deployable=False),
)
#: Where each of pldp's own oracle classes is defined: (params key, class name) -> module.
BUILTIN: dict[tuple[str, str], str] = {e.key: e.module for e in ENTRIES}


def entry(name: str) -> Entry:
    """The entry of pldp's own class ``name`` (``KRR``; or its CLI name ``krr``).

    Raises
    ------
    KeyError
        No class of pldp has that name.
    """
    for e in ENTRIES:
        if name in (e.name, e.cli_name):
            return e
    raise KeyError(name)


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
