"""Run the battery: :func:`check_oracle` (every check, one report) and :func:`parametrize_with_checks`
(one pytest test per oracle and check)."""

from __future__ import annotations

import re
import unittest
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pldp.oracle import FrequencyOracle
from pldp.testing.case import OracleCase, as_case
from pldp.testing.checks import CHECKS

__all__ = ["check_oracle", "parametrize_with_checks"]

Check = Callable[[OracleCase | FrequencyOracle], None]


def check_oracle(
    oracle: FrequencyOracle | OracleCase,
    *,
    data: Any = None,
    variant: Any = None,
    bad: Sequence[Callable[[], Any]] = (),
    seed: int | None = None,
    quick: bool = False,
    checks: Iterable[Check] | None = None,
) -> dict[str, str]:
    """Run every check of the battery that applies to ``oracle``; fail naming the checks that fail.

    In the manner of scikit-learn's ``check_estimator``: construction refusals, the fingerprint,
    the parameters' round trip, the privacy claim and its agreement with the sampler's exact
    claims, the audit (tight and faithful; flags a sampler running the variant), the per-user path
    against ``simulate`` in distribution (with its power check against the variant), every
    estimation method and its intervals, tally merge and JSON, refusal of another oracle's tally,
    same seed same bytes (:mod:`pldp.testing.checks`), and fake users' reports and their gain
    (:mod:`pldp.testing.attack`).
    Every check runs, also after a failure, so the message lists all of them.

    Parameters
    ----------
    oracle : FrequencyOracle or OracleCase
        The mechanism or protocol (then the other arguments describe its case), or a case.
    data : tuple, optional
        True data of a small population, as ``oracle.simulate`` takes them before the generator
        (a 1-tuple of counts for a mechanism). Default: :func:`~pldp.testing.default_data`.
    variant : FrequencyOracle, optional
        An oracle of the same kind with other parameters; the power checks run only with one.
    bad : sequence of callables
        Constructions that must raise :class:`pldp.PLDPError`.
    seed : int, optional
        Seeds every check. Default: from the oracle's fingerprint (the same in every process).
    quick : bool
        Fewer repeats and audit trials, and no power checks against the variant
        (:data:`pldp.testing.checks.QUICK`).
    checks : iterable of checks, optional
        Run these instead of :data:`pldp.testing.checks.CHECKS`.

    Returns
    -------
    dict
        Check name -> ``"passed"`` or ``"skipped: <reason>"``.

    Raises
    ------
    AssertionError
        One or more checks failed. The message has one line per failing check, which starts with
        the check's name and the oracle, e.g. ``check_per_user_matches_simulate failed for
        KRR(epsilon=1, d=5): p = 1.2e-09 < 0.001: ...``.

    Examples
    --------
    >>> import pldp
    >>> from pldp.testing import check_oracle
    >>> results = check_oracle(pldp.KRR(1.0, 5), variant=pldp.KRR(1.25, 5), quick=True)
    >>> results["check_per_user_matches_simulate"], results["check_refusals"]
    ('passed', 'skipped: no bad constructions given')
    """
    if isinstance(oracle, OracleCase):
        if data is not None or variant is not None or bad or seed is not None or quick:
            raise TypeError("give either an OracleCase or an oracle with its case's arguments, not both")
        case = oracle
    else:
        case = OracleCase(oracle, data=data, variant=variant, bad=bad, seed=seed, quick=quick)
    results: dict[str, str] = {}
    failures: list[str] = []
    for check in CHECKS if checks is None else checks:
        name = getattr(check, "__name__", repr(check))
        try:
            check(case)
        except unittest.SkipTest as exc:
            results[name] = f"skipped: {exc}"
        except AssertionError as exc:
            results[name] = "failed"
            failures.append(str(exc))
        else:
            results[name] = "passed"
    if failures:
        head = f"{len(failures)} of {len(results)} checks failed for {case.name}:"
        raise AssertionError("\n".join([head, *failures]))
    return results


def _test_id(text: str) -> str:
    return re.sub(r"\s+", "", text)


def parametrize_with_checks(
    cases: Iterable[FrequencyOracle | OracleCase], *, checks: Iterable[Check] | None = None
) -> Any:
    """A pytest ``parametrize`` decorator over every (case, check) pair, as scikit-learn's.

    The test receives ``case`` (an :class:`~pldp.testing.OracleCase`) and ``check`` and calls
    ``check(case)``; checks that do not apply are skipped. Ids read ``<case name>-<check name>``.
    pytest is imported only when this is called.

    Parameters
    ----------
    cases : iterable of FrequencyOracle or OracleCase
        The oracles (checked with the defaults) or cases.
    checks : iterable of checks, optional
        These instead of :data:`pldp.testing.checks.CHECKS`.

    Returns
    -------
    pytest.MarkDecorator

    Examples
    --------
    A test module of your own::

        import pldp
        from pldp.testing import parametrize_with_checks

        @parametrize_with_checks([pldp.KRR(1.0, 5), pldp.OUE(1.0, 5)])
        def test_conforms(case, check):
            check(case)
    """
    import pytest

    chosen = list(CHECKS if checks is None else checks)
    params = [
        pytest.param(case, check, id=_test_id(f"{case.name}-{getattr(check, '__name__', repr(check))}"))
        for case in map(as_case, cases)
        for check in chosen
    ]
    return pytest.mark.parametrize(("case", "check"), params)
