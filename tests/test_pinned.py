"""Pinned behaviour: what a redesign must not change, for a spec of every family.

For each case of :func:`tests.deploy_cases.oracle_cases`: the spec's id and its oracle's
fingerprint (the spec is its content's hash, so any change to a threshold, a claim or the JSON
form changes it), the bytes of 300 client reports drawn from a fixed word stream, the tally the
collector decodes from them, the verification's rows, and every estimation method's frequencies
from that tally. ``tests/pinned.json`` holds the values taken on the commit before the channel
layer was introduced (issue 23); they held unchanged after it.

A change that is *meant* to change one of these (a new wire format, a new estimator) regenerates
the file with ``python -m tests.test_pinned`` and says why in its commit.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pldp
from pldp.client import Client
from pldp.deploy import decode, verify
from tests.deploy_cases import answers_of, oracle_cases, spec_of, words

PINNED = Path(__file__).with_name("pinned.json")
#: Relative tolerance of a pinned closed-form estimate (the arithmetic is the same; only the BLAS
#: may differ).
RTOL = 1e-9
#: Absolute tolerance of an iterative estimate ("mle", "paper"): the EM stops once no parameter
#: moves by more than 0.01 sqrt(tol) = 1e-7 in a cycle (:mod:`pldp.estimation.em`), so another
#: numpy's rounding (its SIMD sums, say) can end the path a few cycles earlier or later. Measured:
#: FEBSF's EM moved by 6.5e-10 between numpy builds; a real change moves estimates by far more.
ITERATIVE_ATOL = 1e-7
#: "robust" and "detect" too: PLDP-FEBSF's k-RR robust estimate rests on the joint EM's level shares,
#: its "detect" is the joint EM on the screened reports.
ITERATIVE = {"mle", "paper", "robust", "detect"}


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def observe(name: str, oracle: pldp.FrequencyOracle) -> dict[str, Any]:
    """Everything pinned of one case."""
    spec = spec_of(oracle, name)
    answers, kw = answers_of(name, oracle, 300, np.random.default_rng(7))
    batch = Client(spec, random=words(11)).reports(answers, **kw)
    tally = decode(spec, batch.to_json())
    mech = spec.mechanism()
    estimates = {}
    for method in mech.methods:
        result = mech.estimate(tally, method)
        parts = list(result) if isinstance(result, pldp.EstimateSet) else [result]
        estimates[method] = [float(f"{v:.12g}") for est in parts for v in est.frequencies]
    return {
        "spec_id": spec.id,
        "fingerprint": oracle.fingerprint,
        "reports": _sha(batch.to_json_lines()),
        "tally": _sha(json.dumps(tally.to_dict(), sort_keys=True)),
        "verification": _sha(json.dumps(verify(spec).to_dict(), sort_keys=True)),
        "estimates": estimates,
    }


CASES = oracle_cases()


@pytest.fixture(scope="module")
def pinned() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(PINNED.read_text())
    return data


def test_every_case_is_pinned(pinned: dict[str, Any]) -> None:
    assert set(pinned) == set(CASES)


@pytest.mark.parametrize("name", list(CASES))
def test_spec_reports_tally_and_estimates_are_unchanged(name: str, pinned: dict[str, Any]) -> None:
    got, want = observe(name, CASES[name]), pinned[name]
    for key in ("spec_id", "fingerprint", "reports", "tally", "verification"):
        assert got[key] == want[key], f"{name}: the {key} changed"
    assert set(got["estimates"]) == set(want["estimates"])
    for method, values in want["estimates"].items():
        if method in ITERATIVE:
            np.testing.assert_allclose(got["estimates"][method], values, rtol=0, atol=ITERATIVE_ATOL, err_msg=method)
        else:
            np.testing.assert_allclose(got["estimates"][method], values, rtol=RTOL, atol=1e-12, err_msg=method)


if __name__ == "__main__":  # python -m tests.test_pinned: write tests/pinned.json anew
    PINNED.write_text(json.dumps({n: observe(n, o) for n, o in CASES.items()}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {PINNED}", file=sys.stderr)
