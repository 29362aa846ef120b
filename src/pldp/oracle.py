"""The one interface of every mechanism and protocol: :class:`FrequencyOracle`.

A frequency oracle (Wang et al., USENIX Security 2017) is a client randomizer together with the
server's aggregation and estimation. In pldp every mechanism (:class:`pldp.Mechanism`: KRR, URR,
IPRR, RAPPOR, OUE, IDUE) and every protocol (padding-and-sampling, PLDP-FEBSF, RCF, APLDP, PBP,
PPDA, MPLDP) is one, used the same way::

    reports = oracle.perturb(*users, rng)        # on the users' devices (vectorised here)
    tally = oracle.tally(reports)                # mergeable sufficient statistics
    tally = oracle.simulate(*true_data, rng)     # the same tally's exact law, without users
    est = pldp.estimate(oracle, tally, method)   # = oracle.estimate(tally, method)
    oracle.privacy()                             # exact check of the claim: a PrivacyCheck

Each oracle describes itself by its canonical parameters (:meth:`FrequencyOracle.params`) and is
identified by their :attr:`~FrequencyOracle.fingerprint`, which every tally it makes carries;
estimating, merging or loading a tally of another oracle is refused.

Estimation methods. Every oracle accepts the standard names of :data:`STANDARD_METHODS`:
``"unbiased"`` (its unbiased or approximately unbiased estimator), ``"norm_sub"`` (that estimate
projected onto the probability simplex, Wang et al. NDSS 2020) and ``"mle"`` (its maximum
likelihood estimator). Extra names are listed in :attr:`FrequencyOracle.methods` and documented
by the oracle's ``estimate``; pldp's own are those of the table :mod:`pldp.methods`, which says
what each guarantees.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from functools import cached_property
from typing import Any, ClassVar, Self, cast

import numpy as np

from pldp.channel.node import Node
from pldp.domain import Domain
from pldp.errors import EstimationError, TallyError
from pldp.fingerprint import fingerprint
from pldp.methods import STANDARD_METHODS, check_method
from pldp.privacy.base import PrivacyCheck
from pldp.tally import BaseTally, Tally

__all__ = ["STANDARD_METHODS", "FrequencyOracle"]


class FrequencyOracle(ABC):
    """A client randomizer with its server side: tally, simulate, estimate, privacy check.

    See the module docstring for the workflow. Subclasses implement :meth:`params`,
    :meth:`perturb`, :meth:`tally`, :meth:`simulate`, :meth:`estimate` and :meth:`privacy`, and
    set :attr:`methods` when they accept more than the standard estimation methods and
    :attr:`tally_type` when their tally is not a :class:`~pldp.tally.Tally`.
    """

    #: Estimation methods :meth:`estimate` accepts: the standard ones first, then any extras.
    methods: ClassVar[tuple[str, ...]] = STANDARD_METHODS
    #: The class of this oracle's tallies (for :meth:`load_tally`).
    tally_type: ClassVar[type[BaseTally]] = Tally
    #: The member of :meth:`params` that names the class: ``"mechanism"`` or ``"protocol"``.
    params_key: ClassVar[str]

    # ------------------------------------------------------------------ identity
    @property
    @abstractmethod
    def domain(self) -> Domain:
        """The item labels."""

    @property
    def d(self) -> int:
        """Domain size."""
        return len(self.domain)

    @abstractmethod
    def params(self) -> dict[str, Any]:
        """Canonical parameters: a JSON-able dict of everything a client needs to run this oracle.

        Two oracles with equal parameters produce reports with the same law; the
        :attr:`fingerprint` is their hash (:mod:`pldp.fingerprint`).
        """

    @classmethod
    def from_params(cls, params: dict[str, Any]) -> Self:
        """The oracle of this class whose :meth:`params` are ``params``.

        :func:`pldp.registry.oracle_from_params` calls it for the class that ``params`` names, and
        checks the result's parameters against ``params`` exactly.
        """
        raise NotImplementedError(f"{cls.__name__} cannot be rebuilt from its parameters")

    def sampler(self) -> Node:
        """The sampler node that runs this oracle's client exactly (:mod:`pldp.channel`): its integer
        thresholds on the ``2**-32`` grid and the privacy claims it carries."""
        raise NotImplementedError(f"{type(self).__name__} has no sampler: it cannot run on a device client")

    def reports_from_columns(self, columns: Mapping[str, np.ndarray]) -> tuple[Any, ...]:
        """The arguments of :meth:`tally` for reports held as the payload columns of :meth:`sampler`
        (``docs/wire-format.md`` §4; how the collector tallies decoded reports). By default the
        last column, as :meth:`perturb` returns it."""
        return (columns[self.sampler().columns()[-1].name],)

    def report_columns(self, reports: Any) -> dict[str, np.ndarray]:
        """The payload columns (:meth:`sampler`'s) of what :meth:`perturb` returns: the inverse of
        :meth:`reports_from_columns`. By default :meth:`perturb`'s array is the last column."""
        return {self.sampler().columns()[-1].name: np.asarray(reports)}

    @cached_property
    def fingerprint(self) -> str:
        """32 hex digits identifying this exact oracle (the hash of :meth:`params`)."""
        return fingerprint(self.params())

    def bind_fingerprint(self, fingerprint: str) -> None:
        """Identify this oracle (and every tally it makes) by ``fingerprint`` instead of the hash of
        its parameters: how an oracle rebuilt from a campaign spec carries the spec's id
        (:meth:`pldp.deploy.Spec.mechanism`), so tallies of different campaigns never mix."""
        from pldp.fingerprint import is_fingerprint

        if not is_fingerprint(fingerprint):
            raise TallyError(f"not a fingerprint: {fingerprint!r}")
        self.__dict__["fingerprint"] = fingerprint

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self) or not isinstance(other, FrequencyOracle):
            return False
        return other.fingerprint == self.fingerprint

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.fingerprint))

    # ------------------------------------------------------------- client and server
    @abstractmethod
    def perturb(self, *args: Any, **kwargs: Any) -> Any:
        """Randomize a batch of users (their data, then a ``numpy.random.Generator``)."""

    @abstractmethod
    def tally(self, *args: Any, **kwargs: Any) -> Any:
        """Aggregate reports into a mergeable tally carrying this oracle's fingerprint."""

    @abstractmethod
    def simulate(self, *args: Any, **kwargs: Any) -> Any:
        """Draw the tally of users with the given true data from its exact law."""

    @abstractmethod
    def estimate(self, *args: Any, **kwargs: Any) -> Any:
        """``estimate(tally, method="unbiased", **options)``: the item frequencies from a tally of
        this oracle's reports (each oracle documents its methods and options)."""

    @abstractmethod
    def privacy(self) -> PrivacyCheck:
        """Exact check of the privacy claim."""

    def load_tally(self, data: dict[str, Any]) -> Any:
        """A tally of this oracle from :meth:`~pldp.tally.BaseTally.to_dict`'s output (its
        fingerprint is checked)."""
        return self.tally_type.from_dict(data, source=self)

    # ------------------------------------------------------------------- checks
    def _check_method(self, method: str) -> str:
        """``method`` if this oracle offers it (:attr:`methods`), else the refusal naming those it does."""
        return check_method(method, self.methods, type(self).__name__)

    def _check_tally(self, tally: Any) -> Any:
        """The tally, if it is of this oracle's type, made by this oracle, and not empty."""
        if not isinstance(tally, self.tally_type):
            expected, got = self.tally_type.__name__, type(tally).__name__
            raise EstimationError(f"the tally does not come from {self!r}: expected a {expected}, got {got}")
        try:
            tally.check_source(self)
        except TallyError as exc:
            raise EstimationError(str(exc)) from None
        if cast(Any, tally).n <= 0:  # every tally type has n, a field or a property
            raise EstimationError("the tally holds no reports (n = 0)")
        return tally
