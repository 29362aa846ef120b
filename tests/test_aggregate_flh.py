"""FLH report files aggregated in parts: the parts merge their ``(seed, value)`` tables and the support
counts are read once, and the tally equals the in-memory tally of the same reports byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import pldp
from pldp import aggregate as agg
from pldp.client import Client
from pldp.deploy import Spec, decode
from pldp.deploy.files import write_reports
from pldp.errors import TallyError
from pldp.mechanisms import hashed
from tests.deploy_cases import words

pytest.importorskip("pyarrow")

#: A small family and domain: the grouped path of the in-memory tally (seeds (d + g) < n d) too.
FLH = pldp.OLH.flh(2.0, 300, seeds=1 << 6)
#: Reports per file (one file smaller than a row group), written in row groups of ROW_GROUP.
SIZES = (700, 45, 1300)
ROW_GROUP = 250


def _files(spec: Spec, root: Path) -> list[Path]:
    rng = np.random.default_rng(20261130)
    paths = []
    for i, n in enumerate(SIZES):
        answers = rng.zipf(1.6, n) % FLH.d  # concentrated data: many reports share a (seed, value)
        batch = Client(spec, random=words(i)).reports(answers)
        paths.append(write_reports(batch, root, 20000 + i, name=f"f{i}", row_group=ROW_GROUP))
    return paths


def test_flh_files_in_parts_tally_as_one_in_memory_tally(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    spec = Spec.from_mechanism(FLH, question="flh parts")
    paths = _files(spec, tmp_path)
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.concat_tables([pq.read_table(p) for p in paths])
    (reports,) = FLH.reports_from_columns({c: table.column(c).to_numpy() for c in ("seed", "value")})
    whole = spec.mechanism().tally(reports)  # the in-memory tally: support_counts' grouped path
    assert whole.n == sum(SIZES) and whole == decode(spec, table)  # the collector's count too

    calls = []
    support = hashed.table_support
    monkeypatch.setattr(hashed, "table_support", lambda *a: calls.append(1) or support(*a))
    result = agg.aggregate(spec, paths, workers=1, progress=False)
    assert result.parts == sum(-(-n // ROW_GROUP) for n in SIZES) == 10  # 3 + 1 + 6 row groups
    assert len(calls) == 1  # the support counts of the merged table, once, not once per part
    assert json.dumps(result.tally.to_dict()) == json.dumps(whole.to_dict())  # byte for byte

    # tally_part of a row group still gives that row group's tally (the count, finished)
    part = agg.tally_part(spec, paths[2], 1)
    assert part == spec.mechanism().tally(reports[745 + ROW_GROUP : 745 + 2 * ROW_GROUP])


def test_counts_merge_only_with_counts_of_the_same_oracle() -> None:
    rng = np.random.default_rng(7)
    reports = FLH.perturb(rng.integers(0, FLH.d, 900), rng)
    merged = FLH.count_reports(reports[:400]).merge(FLH.count_reports(reports[400:]))
    assert merged.n == 900 and FLH.tally_of(merged) == FLH.tally(reports)
    other = pldp.OLH.flh(2.0, 300, seeds=1 << 7)
    with pytest.raises(TallyError):
        merged.merge(other.count_reports(other.perturb(np.zeros(5, dtype=int), rng)))
    with pytest.raises(TallyError):
        other.tally_of(merged)
    olh = pldp.OLH(2.0, 300)  # OLH's 2**31 seeds have no table: its count is its tally
    assert olh.count_reports(reports) == olh.tally(reports)
