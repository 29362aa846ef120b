"""The conformance battery of pldp's frequency oracles, as a public tool.

In the manner of scikit-learn's ``check_estimator`` and ``parametrize_with_checks``: a mechanism
or protocol of your own (a subclass of :class:`pldp.DirectEncoding`, :class:`pldp.Mechanism`,
:class:`pldp.protocols.Protocol`, or :class:`pldp.FrequencyOracle` itself) goes through the
same checks as every shipped one::

    from pldp.testing import check_oracle
    check_oracle(MyMechanism(...))            # AssertionError naming the failing checks

or, in a test module, one pytest test per (oracle, check)::

    from pldp.testing import parametrize_with_checks

    @parametrize_with_checks([MyMechanism(...), OracleCase(make, variant=...)])
    def test_conforms(case, check):
        check(case)

=================  ================================================================
module             holds
=================  ================================================================
``case``           :class:`OracleCase`: the oracle, its data, a variant, bad
                   constructions, the seed; the default data of each kind of oracle
``checks``         the checks, one function each, and their effort
``privacy_map``    whether ``privacy()`` states only what the exact claims of ``sampler()`` prove
``attack``         :func:`check_attack`: fake users' reports and their gain (:mod:`pldp.attacks`)
``distribution``   tallies as vectors and the two-sample test of their law
``run``            :func:`check_oracle` and :func:`parametrize_with_checks`
``cases``          every shipped mechanism and protocol as a case (the test suite's)
``heavy``          :func:`check_heavy_hitter`: the checks that fit a heavy-hitter protocol
                   (PEM, TreeHist, SFP), and why the others do not
=================  ================================================================

pytest is needed only by :func:`parametrize_with_checks` (imported when it is called).
"""

from pldp.testing.attack import check_attack
from pldp.testing.case import OracleCase, as_case, default_data
from pldp.testing.cases import standard_cases
from pldp.testing.checks import (
    CHECKS,
    check_audit_flags_variant,
    check_audit_tight,
    check_estimation_methods,
    check_fingerprint,
    check_params_round_trip,
    check_per_user_matches_simulate,
    check_privacy,
    check_privacy_map,
    check_refusals,
    check_refuses_foreign_tally,
    check_seeded,
    check_tally_roundtrip,
)
from pldp.testing.distribution import flatten, same_law_pvalue
from pldp.testing.heavy import HEAVY_CHECKS, check_heavy_hitter
from pldp.testing.run import check_oracle, parametrize_with_checks

__all__ = [
    "CHECKS",
    "HEAVY_CHECKS",
    "OracleCase",
    "as_case",
    "check_attack",
    "check_audit_flags_variant",
    "check_audit_tight",
    "check_estimation_methods",
    "check_fingerprint",
    "check_heavy_hitter",
    "check_oracle",
    "check_params_round_trip",
    "check_per_user_matches_simulate",
    "check_privacy",
    "check_privacy_map",
    "check_refusals",
    "check_refuses_foreign_tally",
    "check_seeded",
    "check_tally_roundtrip",
    "default_data",
    "flatten",
    "parametrize_with_checks",
    "same_law_pvalue",
    "standard_cases",
]
