"""The deployment path: the Python client with OS randomness, decode from Arrow, the JS client.

* ``Client.reports`` (a batch, vectorised) for k-RR and OUE over d = 100, with the operating
  system's CSPRNG, and one ``Client.report`` (what a device pays per answer);
* ``Client.reports`` of memoized chains (L-GRR, L-OUE over d = 100) with a memo file (locked, read,
  checked and, for new values, rewritten atomically at every batch);
* ``pldp.deploy.decode`` of 5 M k-RR reports from an Arrow table (the collector's and the
  aggregator's path; needs the ``deploy`` extra, pyarrow);
* the JS client in Node (``clients/js/bench.mjs``, ``crypto.getRandomValues``, serialized
  reports), when ``node`` is on the PATH.

Called by ``run.py``; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
from pathlib import Path

import numpy as np

import pldp
from harness import HERE, Mode, Row, measure, timed_row
from pldp.client import Client
from pldp.deploy import Spec, decode
from report import fmt_rate, fmt_time

D = 100


def _memo_rows(mode: Mode, rng: np.random.Generator, repeats: int) -> list[Row]:
    """The Python client with a memo file: batches of 100 k answers over d = 100 (the first batch
    draws and stores every value's permanent response; the measured ones reuse them)."""
    rows = []
    chains = (("L-GRR ε∞=2, ε1=1", pldp.LGRR(2.0, 1.0, D)), ("L-OUE ε∞=2, ε1=1", pldp.LOUE(2.0, 1.0, D)))
    with tempfile.TemporaryDirectory() as tmp:
        for i, (label, chain) in enumerate(chains):
            n = 100_000
            client = Client(Spec.from_mechanism(chain, question="bench"), store=Path(tmp) / f"memo{i}.json")
            x = rng.integers(0, D, n)
            client.reports(x)  # every value's PRR drawn and stored
            t = measure(lambda c=client, a=x: c.reports(a), repeats, mode.min_repeat_s)
            rows.append(
                timed_row(
                    "client: Client.reports with a memo",
                    f"{label}, d={D}, a batch of {n:,}, memo file, OS CSPRNG",
                    t,
                    n / t.best,
                    "reports/s",
                    f"≥ {fmt_rate(1e5, 'reports/s')}",
                    n / t.best >= 1e5,
                )
            )
    return rows


def bench_deploy(mode: Mode, rng: np.random.Generator) -> list[Row]:
    """Client, decode and JS client rows (targets of the deployment issue).

    Parameters
    ----------
    mode : Mode
        Repeat counts (quick or full).
    rng : numpy.random.Generator
        The generator of the answers (the clients draw from the OS).

    Returns
    -------
    list of Row
        Python client batches (k-RR, OUE), one report, decode from Arrow, JS client (k-RR, OUE).
    """
    direct = Spec.from_mechanism(pldp.KRR(1.0, D), question="bench")
    unary = Spec.from_mechanism(pldp.OUE(1.0, D), question="bench")
    repeats = max(3, mode.repeats // 10)
    rows: list[Row] = []
    for label, spec, n, target in (("k-RR ε=1", direct, 1_000_000, 1e6), ("OUE ε=1", unary, 100_000, 1e5)):
        client, x = Client(spec), rng.integers(0, D, n)
        t = measure(lambda c=client, a=x: c.reports(a), repeats, mode.min_repeat_s)
        rows.append(
            timed_row(
                "client: Client.reports",
                f"{label}, d={D}, a batch of {n:,}, OS CSPRNG (os.urandom)",
                t,
                n / t.best,
                "reports/s",
                f"≥ {fmt_rate(target, 'reports/s')}",
                n / t.best >= target,
            )
        )
    rows += _memo_rows(mode, rng, repeats)
    client = Client(direct)
    t = measure(lambda: client.report(3), mode.repeats, mode.min_repeat_s)
    rows.append(
        timed_row(
            "client: one Client.report",
            f"k-RR ε=1, d={D}: the report dict of one answer, OS CSPRNG",
            t,
            1 / t.best,
            "reports/s",
            f"≤ {fmt_time(50e-6)}",
            t.best <= 50e-6,
        )
    )
    rows += _decode_rows(direct, mode, rng)
    return rows + _js_rows()


def _decode_rows(spec: Spec, mode: Mode, rng: np.random.Generator) -> list[Row]:
    try:
        table = Client(spec).reports(rng.integers(0, D, 5_000_000)).to_arrow()
    except ImportError:  # pyarrow: the deploy extra
        return []
    t = measure(lambda: decode(spec, table), max(3, mode.repeats // 20), mode.min_repeat_s)
    n = table.num_rows
    return [
        timed_row(
            "decode",
            f"k-RR ε=1, d={D}, {n:,} reports from an Arrow table (validated, deduplicated, tallied)",
            t,
            n / t.best,
            "reports/s",
            f"≥ {fmt_rate(5e6, 'reports/s')}",
            n / t.best >= 5e6,
        )
    ]


def _js_rows() -> list[Row]:
    node = shutil.which("node")
    if node is None:
        return []
    script = HERE.parent / "clients" / "js" / "bench.mjs"
    out = subprocess.run([node, str(script)], capture_output=True, text=True, check=True, timeout=300).stdout
    rates = json.loads(out)
    rows = []
    cases = (
        ("direct_per_s", f"k-RR ε=2, d={D}", 1e5),
        ("unary_per_s", f"OUE ε=1, d={D}", 1e4),
        ("heavy_per_s", "free text: TreeHist ε=4, max_bytes 16 (under 50 µs a report)", 2e4),
    )
    for key, label, target in cases:
        rate = float(rates[key])
        rows.append(
            Row(
                "JS client in Node: reportJSON",
                f"{label}, crypto.getRandomValues, one serialized report per call for 1 s (clients/js/bench.mjs)",
                1 / rate,
                rate,
                "reports/s",
                fmt_rate(rate, "reports/s"),
                f"≥ {fmt_rate(target, 'reports/s')}",
                rate >= target,
            )
        )
    return rows
