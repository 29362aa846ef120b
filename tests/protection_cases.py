"""The memoized campaign whose guarantees over time `pldp spec verify` prints and the collector's round
endpoint carries (tests/test_rounds_guarantees.py, tests/test_service_protection.py): both must say the
same numbers."""

from __future__ import annotations

from typing import Any

import pldp
from pldp.deploy import Spec

#: L-GRR over two answers, eps_inf = 2, eps_1 = 1 (docs/longitudinal.md, "A device's whole history"):
#: the whole-history loss is 1.00, 2.00, 2.64, 3.36, 4.02, 4.75, 5.42, 6.16 for r = 1..8.
LGRR = pldp.LGRR(2.0, 1.0, 2)
SLEPT = {"question": "Slept well?", "labels": ["yes", "no"]}
CAPPED = Spec.from_mechanism(LGRR, **SLEPT, caps={"rounds": 8})
UNCAPPED = Spec.from_mechanism(LGRR, **SLEPT)

#: CAPPED's protection, apart from its whole history: the answer's eps_inf (per answer and at worst),
#: one report's eps_1, the values it can take, the cap on rounds, and min(8, 2) * 2 for the values.
CAPPED_PROTECTION: dict[str, Any] = {
    "permanent_epsilon": 2.0,
    "permanent_epsilons": [2.0, 2.0],
    "one_report_epsilon": 1.0,
    "values": 2,
    "rounds_cap": 8,
    "values_epsilon": 4.0,
}
