"""Property-based tests of the collector's API from its own schema (schemathesis), against a real server.

Every operation of ``/openapi.json`` (whatever routes the collector has, so new ones are included
as they come) gets requests generated from its schema, valid and invalid, each sent as the admin,
as an analyst granted the campaign, with no token and with an invalid one (and a body also as
``text/plain``, which the collector refuses); a campaign id in the path is the real open
campaign's half of the time. Every answer must conform: no 5xx, a status code the operation
declares, the declared content type, headers and body schema. Bounded: a few examples per
operation and mode, derandomized.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("fastapi")
# schemathesis (and the hypothesis it brings) is imported by the test that uses it, not when the
# suite is collected: every pytest worker would pay for it otherwise.
pytestmark = pytest.mark.skipif(importlib.util.find_spec("schemathesis") is None, reason="needs schemathesis")

import pldp  # noqa: E402
from pldp.client import Client  # noqa: E402
from pldp.deploy import Spec  # noqa: E402
from tests.deploy_cases import words  # noqa: E402
from tests.service_server import Server  # noqa: E402

SPEC = Spec.from_mechanism(pldp.KRR(1.0, 4), question="Property-based?")
#: Examples per operation and generation mode (each sent with three tokens).
EXAMPLES = 8


@pytest.fixture(scope="module")
def collector(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Server, dict[str, str | None]]]:
    """A collector (default limits) with an open campaign holding reports, and its three kinds of caller."""
    srv = Server(tmp_path_factory.mktemp("schemathesis") / "pldp.db", "--rate", "100")
    srv.start()
    admin = srv.admin()
    admin.create_campaign(SPEC)
    srv.client().submit(SPEC.id, Client(SPEC, words(5)).reports(np.arange(40) % 4))
    analyst = admin.create_token("schemathesis", [SPEC.id])["token"]
    yield srv, {"admin": srv.admin_token, "analyst": analyst, "anonymous": None, "invalid": "not-a-token"}
    srv.stop()


def test_every_operation_answers_as_its_schema_says(collector: tuple[Server, dict[str, str | None]]) -> None:
    import schemathesis
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
    from hypothesis.errors import Unsatisfiable
    from schemathesis.checks import not_a_server_error
    from schemathesis.core import NotSet
    from schemathesis.generation import GenerationMode
    from schemathesis.specs.openapi.checks import (
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
        status_code_conformance,
    )

    checks = [
        not_a_server_error,
        status_code_conformance,
        content_type_conformance,
        response_headers_conformance,
        response_schema_conformance,
    ]
    srv, tokens = collector
    schema = schemathesis.openapi.from_url(f"{srv.url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 13
    sent: dict[str, set[int]] = {}

    def exercise(operation: Any, mode: GenerationMode) -> None:
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        )
        @given(case=operation.as_strategy(generation_mode=mode), real=st.booleans())
        def run(case: Any, real: bool) -> None:
            if real and "campaign_id" in (case.path_parameters or {}):
                case.path_parameters["campaign_id"] = SPEC.id
            variants: list[dict[str, str]] = [{"Authorization": f"Bearer {t}"} if t else {} for t in tokens.values()]
            if case.body is not None and not isinstance(case.body, NotSet):
                variants.append({"Authorization": f"Bearer {tokens['admin']}", "Content-Type": "text/plain"})
            for headers in variants:
                response = case.call(base_url=srv.url, headers=headers, timeout=30)
                case.validate_response(response, checks=checks)
                sent.setdefault(operation.label, set()).add(response.status_code)

        try:
            run()
        except Unsatisfiable:  # nothing to make invalid (an operation without parameters or body)
            assert mode is GenerationMode.NEGATIVE, operation.label

    for operation in operations:
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            exercise(operation, mode)
    assert set(sent) == {op.label for op in operations}
    assert any(200 in codes or 201 in codes for codes in sent.values())
    log = Path(srv.db.with_suffix(".log")).read_text(errors="replace")
    assert "Traceback" not in log, log[-3000:]
