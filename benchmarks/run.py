"""Speed benchmarks of pldp: ``make bench`` (full) and ``make bench-quick`` (``--quick``).

Rows (see ``benchmarks/README.md``), in the order of the table:

* ``direct_rows.py``: per-user ``perturb`` + ``tally`` of KRR and IPRR at n = 10^6, d = 100
  and the bare-numpy references, Monte Carlo trials, the MLE (exact and EM solvers);
* ``unary_rows.py``: unary encoding (OUE, IDUE), the IDUE solvers and the PLDP-FEBSF EM;
* ``deploy_rows.py``: the Python client with OS randomness, ``decode`` from Arrow, the JS client;
* ``aggregate_rows.py``: ``pldp.aggregate.tally_part`` on one 10^7-report Parquet file, one core;
* ``audit_rows.py``: ``pldp.audit.audit`` of one pair at 10^6 reports per input, one core;
* ``attack_rows.py``: the attack experiment of every protocol, 20 repeats at n = 10^6, d = 100, one core;
* ``detect_rows.py``: the ``"detect"`` estimate against ``"unbiased"`` on the same reports, n = 10^6, one core;
* ``hashed_rows.py``: local hashing, the support counts of OLH and FLH at n = 10^6, d = 10^4, one core,
  and the Python and JS clients' OLH reports per second;
* ``heavy_rows.py``: PEM's, TreeHist's and SFP's discovery of the top 20 strings of 10^6 users, and
  their clients, one core;
* ``scale_rows.py``: ``pldp aggregate`` of up to 10^9 reports on a 2-worker LocalCluster (time
  against n, memory per worker), and the figure ``scale.svg``;
* ``flh_dask.py``: ``pldp aggregate`` of 10^9 FLH reports (d = 10^4, ε = 4) from files to estimate on a
  2-worker LocalCluster, target 60 s (10^7 with ``--quick``; the files, some 17 GB at 10^9, are deleted);
* ``once_rows.py``: what counting each report once costs ``aggregate`` at 10^8 and 10^9 reports
  (the footers' check, ``unique_ids``, two copies of every report);
* ``service_rows.py``: the collector under load on loopback (``loadgen.py``), needs the service extra;
* ``peers.py``: pldp beside pure-ldp and multi-freq-ldpy (needs the ``bench`` extra);
* ``large_domain_rows.py``: pldp's OLH, FLH and HR beside pure-ldp's (client and server reports/s,
  same estimates; needs the ``bench`` extra);
* ``heavy_peers.py``: pldp's PEM, TreeHist and SFP beside pure-ldp's on identical users (precision
  and recall of the top 10 with bands over seeds, server time; needs the ``bench`` extra);
* ``longitudinal_rows.py``: the memoized chains' perturb + tally, and pldp beside multi-freq-ldpy's
  longitudinal clients (speed ratio, same estimates).

Shared by all of them: ``harness.py`` (modes, timing, the row type, the table) and
``report.py`` (number formats, the machine). This module only runs them and writes the
results.

Every measurement is warmed up once, then the best (minimum) of several repeats is kept;
calls that take less than a few milliseconds are looped inside a repeat. Everything runs on
one core (importing ``harness`` first pins the BLAS/OpenMP thread counts to 1 before numpy is
imported), except the collector (two server processes) and the scale rows (two Dask workers).

Output: a Markdown table on stdout, ``benchmarks/results.md`` (committed, pasted into the
README) with the notes and figure of the scale rows (``benchmarks/scale.svg``, committed) and
``benchmarks/results.json`` (raw numbers, git-ignored). Missed targets are
marked ``MISSED``; the exit code is 0 regardless.
"""

from __future__ import annotations

# First: importing harness pins the BLAS/OpenMP threads to one before numpy is imported.
from harness import FULL, HERE, QUICK, SEED, Mode, Row, markdown

# isort: split

import argparse
import datetime as dt
import json
import os
import platform
import re
import sys
import time
from dataclasses import asdict
from typing import Any

import numpy as np

import pldp
from aggregate_rows import bench_aggregate
from attack_rows import bench_attacks
from audit_rows import bench_audit
from deploy_rows import bench_deploy
from detect_rows import bench_detect
from direct_rows import bench_mle, bench_perturb, bench_trials
from flh_dask import bench_flh_dask
from hashed_rows import bench_hashed
from heavy_peers import bench_heavy_peers
from heavy_rows import bench_heavy, bench_kosarak
from large_domain_rows import bench_large_domain
from longitudinal_rows import bench_longitudinal
from once_rows import bench_once
from peers import bench_peers
from report import cpu_model, fmt_time, git_revision
from scale_rows import bench_scale, plot_scale, scale_notes
from service_rows import bench_service
from unary_rows import bench_solvers, bench_unary

#: Every suite, by the name ``--only`` takes, in the order of the table.
SUITES = {
    "perturb": bench_perturb,
    "trials": bench_trials,
    "mle": bench_mle,
    "unary": bench_unary,
    "solvers": bench_solvers,
    "deploy": bench_deploy,
    "aggregate": bench_aggregate,
    "audit": bench_audit,
    "attacks": bench_attacks,
    "detect": bench_detect,
    "hashed": bench_hashed,
    "heavy": bench_heavy,
    "heavy_kosarak": bench_kosarak,
    "scale": bench_scale,
    "flh": bench_flh_dask,
    "once": bench_once,
    "service": bench_service,
    "peers": bench_peers,
    "peers_large": bench_large_domain,
    "peers_heavy": lambda mode, rng: bench_heavy_peers(mode, rng, corpora=("zipf", "wordfreq")),
    "longitudinal": bench_longitudinal,
}


# ------------------------------------------------------------------------------ output
def main(argv: list[str] | None = None) -> int:
    """Run the benchmarks, print the table and write ``results.md`` / ``results.json``.

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default: the command line's): ``--quick``, ``--no-write``, ``--only SUITE,...``.

    Returns
    -------
    int
        0, whether the targets are met or not.
    """
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repeats (under a minute)")
    parser.add_argument("--no-write", action="store_true", help="print only; do not write results.md/json")
    parser.add_argument(
        "--only",
        default=None,
        metavar="SUITE,...",
        help=f"run only these suites ({', '.join(SUITES)}); print only, as --no-write",
    )
    args = parser.parse_args(argv)
    mode = QUICK if args.quick else FULL
    suites = list(SUITES.values())
    if args.only is not None:
        names = [s.strip() for s in args.only.split(",")]
        unknown = sorted(set(names) - set(SUITES))
        if unknown:
            parser.error(f"unknown suites {unknown}; the suites are {', '.join(SUITES)}")
        suites, args.no_write = [SUITES[name] for name in names], True

    started = time.perf_counter()
    rng = np.random.default_rng(SEED)
    rows: list[Row] = []
    for part in suites:
        t0 = time.perf_counter()
        rows += part(mode, rng)
        print(f"[{part.__name__}: {time.perf_counter() - t0:.1f} s]", file=sys.stderr, flush=True)
    wall = time.perf_counter() - started

    command = (
        "python benchmarks/run.py" + (" --quick" if args.quick else "") + (f" --only {args.only}" if args.only else "")
    )
    meta = run_meta(mode, command, wall)
    header = (
        f"Benchmarks of {meta['date'][:10]} · `{command}` ({mode.name} mode: best of {mode.repeats} repeats, "
        f"EM best of {mode.slow_repeats}) · numpy {np.__version__} · Python {meta['python']} · "
        f"{meta['cpu']}, 1 thread (load average {meta['load_average_1min_at_end']:.2f}) · "
        f"pldp {pldp.__version__} ({meta['git']})"
    )
    figure = None if args.no_write or not plot_scale(rows, HERE / "scale.svg") else "scale.svg"
    table = markdown(rows, header) + scale_notes(rows, figure)
    print(table, end="")
    print(f"[total {wall:.1f} s]", file=sys.stderr)
    if not args.no_write:
        (HERE / "results.md").write_text(table, encoding="utf-8")
        payload = {"meta": meta, "rows": [asdict(r) for r in rows]}
        (HERE / "results.json").write_text(json.dumps(payload, indent=2, default=float) + "\n", encoding="utf-8")
        if mode.name == "full":
            paste_into_readme(readme_summary(rows, meta))
    return 0


def run_meta(mode: Mode, command: str, wall: float) -> dict[str, Any]:
    """What ``results.json`` records about the run and the machine, taken now (at the end of the run).

    Parameters
    ----------
    mode : Mode
        The run mode.
    command : str
        The command, as shown in the header.
    wall : float
        Seconds the benchmarks took.

    Returns
    -------
    dict
        Date (UTC, ISO 8601), mode, command, CPU, versions, git revision, seed, repeats,
        wall time and the 1-minute load average.
    """
    return {
        "date": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "mode": mode.name,
        "command": command,
        "cpu": cpu_model(),
        "logical_cpus": os.cpu_count(),
        "threads": 1,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "pldp": pldp.__version__,
        "git": git_revision(),
        "seed": SEED,
        "repeats": mode.repeats,
        "slow_repeats": mode.slow_repeats,
        "wall_s": wall,
        "load_average_1min_at_end": os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan"),
    }


#: The README's summary: ``(what, compared with, benchmark (its start), start of the setting)`` of the rows it quotes.
SUMMARY: tuple[tuple[str, str, str, str], ...] = (
    ("k-RR per-user path, d = 100", "pure-ldp 1.2.0", "vs peers: per-user path", "GRR/DE ε=1, d=100: pure-ldp"),
    ("k-RR per-user path, d = 100", "multi-freq-ldpy 0.2.5", "vs peers: per-user path", "GRR/DE ε=1, d=100: multi"),
    ("OUE per-user path, d = 100", "pure-ldp 1.2.0", "vs peers: per-user path", "OUE ε=1, d=100: pure-ldp"),
    ("OUE per-user path, d = 100", "multi-freq-ldpy 0.2.5", "vs peers: per-user path", "OUE ε=1, d=100: multi"),
    ("OUE reports held in memory", "multi-freq-ldpy 0.2.5", "vs peers: peak memory", "OUE ε=1, d=100, the same 10^5"),
    ("one trial at 10^6 users, d = 100", "the peers' fastest per-user run", "count-level trial, pldp only", "OUE ε=1"),
    (
        "`pldp aggregate` of 10^9 k-RR reports from Parquet, 2 workers",
        "the target, 60 s",
        "aggregate 10^9 direct",
        "k-RR",
    ),
)


def readme_summary(rows: list[Row], meta: dict[str, Any]) -> str:
    """The README's short benchmark table: the rows of :data:`SUMMARY`, with what they measured.

    Parameters
    ----------
    rows : list of Row
        Every row of the run.
    meta : dict
        :func:`run_meta`'s record (date and git revision are quoted).

    Returns
    -------
    str
        Markdown: a table of ``what | compared with | result`` and a line pointing to the full table.
    """
    lines = ["| what | compared with | result |", "|---|---|---|"]
    for what, peer, bench, start in SUMMARY:
        row = next((r for r in rows if r.benchmark.startswith(bench) and r.setting.startswith(start)), None)
        if row is None:
            continue
        bold = re.search(r"\*\*(pldp [^*]+)\*\*", row.setting)
        peer_time = re.search(r"takes ≈ ([^ ]+ [a-zµ]+) for 10\^6 users", row.setting)
        if bold:
            result = bold.group(1)
        elif peer_time:
            result = f"pldp {fmt_time(row.seconds)} (simulate + estimate), the peer {peer_time.group(1)}"
        else:
            result = row.rate_text
        lines.append(f"| {what} | {peer} | {result} |")
    lines.append("")
    lines.append(
        f"Measured on {meta['date'][:10]} at commit {meta['git']} ({meta['cpu']}, one thread unless the row says "
        "otherwise); every row, "
        "target and reference line: [benchmarks/results.md](benchmarks/results.md)."
    )
    return "\n".join(lines) + "\n"


def paste_into_readme(table: str) -> None:
    """Replace the table between the README's benchmark markers with ``table``.

    Parameters
    ----------
    table : str
        The Markdown of :func:`harness.markdown`.
    """
    readme = HERE.parent / "README.md"
    start, end = "<!-- BENCHMARKS:START -->", "<!-- BENCHMARKS:END -->"
    text = readme.read_text(encoding="utf-8")
    if start not in text or end not in text:
        print("README.md has no benchmark markers; not updated", file=sys.stderr)
        return
    head, rest = text.split(start, 1)
    tail = rest.split(end, 1)[1]
    readme.write_text(f"{head}{start}\n{table}{end}{tail}", encoding="utf-8")


if __name__ == "__main__":
    sys.exit(main())
