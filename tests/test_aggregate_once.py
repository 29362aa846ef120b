"""Each report counted once by ``pldp.aggregate`` (issue 24, item 1).

Files of one collector's store name the store and the store's numbers of their reports
(:mod:`pldp.deploy.origin`). Where two files of one store hold the same numbers, the copies are
compared and counted once; files of one store that do not meet, and files of two stores, are
counted whole without reading an id. ``unique_ids`` counts every report id once across all
files, as :func:`pldp.deploy.dedupe.read_unique` does in memory. Copies that differ, and a bad
file that other files' reports were to be counted from, are refused.

The reference everywhere is ``decode`` of the reports each file set holds, each once.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from pldp import aggregate as agg
from pldp.aggregate import once as agg_once
from pldp.aggregate import overlap, unique
from pldp.aggregate.parts import kept_rows
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy.dedupe import read_unique, repeated, take
from pldp.deploy.files import write_reports
from pldp.deploy.origin import Origin
from pldp.errors import ReportError
from tests.deploy_cases import answers_of, oracle_cases, spec_of, words

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

CASES = oracle_cases()
S1, S2 = "00000000000000a1", "00000000000000b2"
DAY = 20000
ROW_GROUP = 40


def _spec(name: str) -> Spec:
    return spec_of(CASES[name], name)


def _store(name: str, n: int, seed: int) -> ReportBatch:
    """A store's reports: row i is report number i + 1."""
    answers, kw = answers_of(name, CASES[name], n, np.random.default_rng(seed))
    return Client(_spec(name), random=words(seed)).reports(answers, **kw)


def _file(root: Path, batch: ReportBatch, numbers, name: str, store: str | None = S1, day: int = DAY) -> Path:
    """A file of the store's reports ``numbers`` (1-based), named by ``store`` (None: unmarked)."""
    numbers = np.asarray(numbers, dtype=np.int64)
    origin = None if store is None else Origin.of(store, numbers)
    return write_reports(take(batch, numbers - 1), root, day, name, row_group=ROW_GROUP, origin=origin)


def _once(spec: Spec, batch: ReportBatch, *numbers) -> object:
    """The reference: decode of the store's reports numbered ``numbers`` (union), each once."""
    held = np.unique(np.concatenate([np.asarray(n) for n in numbers])) - 1
    return decode(spec, take(batch, held))


@pytest.fixture(scope="module")
def cluster() -> object:
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as local:
        yield local


# ---------------------------------------------------------------------------------------------- origins
def test_an_origin_is_runs_of_numbers_and_round_trips_through_the_metadata() -> None:
    o = Origin.of(S1, [1, 2, 3, 7, 8, 10])
    assert o.runs.tolist() == [[1, 3], [7, 8], [10, 10]] and o.rows == 6 and o.text() == "1-3,7-8,10-10"
    back = Origin.from_metadata(o.metadata(), 6)
    assert back is not None and back.store == S1 and np.array_equal(back.runs, o.runs)
    assert Origin.from_metadata({b"pldp.spec": b"x"}, 6) is None  # a file that names no store
    assert Origin.from_metadata(Origin.of(S1, []).metadata(), 0).rows == 0
    bad = [
        ({b"pldp.store": S1.encode()}, "only one of"),
        ({b"pldp.store": b"xyz", b"pldp.numbers": b"1-6"}, "16 lower-case hex"),
        ({b"pldp.store": S1.encode(), b"pldp.numbers": b"1-3;7-9"}, "not runs"),
        ({b"pldp.store": S1.encode(), b"pldp.numbers": b"1-3,3-5"}, "strictly increasing"),
        ({b"pldp.store": S1.encode(), b"pldp.numbers": b"4-1"}, "strictly increasing"),
        ({b"pldp.store": S1.encode(), b"pldp.numbers": b"1-5"}, "name 5 reports, but it holds 6"),
    ]
    for meta, message in bad:
        with pytest.raises(ReportError, match=message):
            Origin.from_metadata(meta, 6)


def test_kept_rows_leaves_out_the_skipped_ranges_of_a_row_group() -> None:
    skip = np.array([[0, 3], [10, 12], [38, 45]])
    assert kept_rows(skip, 40, 40) is not None and kept_rows(skip, 40, 40).tolist() == list(range(5, 40))
    assert kept_rows(skip, 0, 40).tolist() == [*range(3, 10), *range(12, 38)]
    assert kept_rows(skip, 80, 40) is None and kept_rows(None, 0, 40) is None


def test_repeated_finds_every_repeat_and_its_first_occurrence_for_any_keys() -> None:
    rng = np.random.default_rng(1)
    hi = rng.integers(0, 4, 500).astype(np.uint64)  # many shared first halves, few whole repeats
    lo = rng.integers(0, 40, 500).astype(np.uint64)
    again, first = repeated(hi, lo)
    seen: dict[tuple[int, int], int] = {}
    want = []
    for i, key in enumerate(zip(hi.tolist(), lo.tolist(), strict=True)):
        if key in seen:
            want.append((i, seen[key]))
        else:
            seen[key] = i
    assert sorted(zip(again.tolist(), first.tolist(), strict=True)) == want


# ---------------------------------------------------------------------------------------------- overlaps
def test_overlaps_are_found_from_the_runs_alone() -> None:
    files = [
        ("a", Origin.of(S1, np.arange(1, 101))),
        ("b", Origin.of(S1, np.arange(101, 201))),  # disjoint from a: nothing
        ("c", Origin.of(S2, np.arange(1, 101))),  # another store: nothing
        ("d", Origin.of(S1, np.r_[51:61, 95:131])),  # two runs, meeting a and b
    ]
    got = [(r.source, r.start, r.keeper, r.keeper_start, r.length, r.number) for r in overlap.overlaps(files)]
    assert got == [("d", 0, "a", 50, 10, 51), ("d", 10, "a", 94, 6, 95), ("d", 16, "b", 0, 30, 101)]
    assert overlap.overlaps(files[:3]) == []
    assert overlap.skip_ranges(overlap.overlaps(files))["d"].tolist() == [[0, 46]]  # the whole file, joined
    chunks = overlap.Repeat("x", 5, "y", 7, 25, S1, 100).chunks(10)
    assert [(c.start, c.keeper_start, c.length, c.number) for c in chunks] == [
        (5, 7, 10, 100), (15, 17, 10, 110), (25, 27, 5, 120)
    ]  # fmt: skip


@pytest.mark.parametrize("name", ["krr", "oue", "apldp", "mpldp"])
def test_partially_overlapping_files_of_one_store_count_each_report_once(name: str, tmp_path: Path) -> None:
    spec, batch = _spec(name), _store(name, 200, seed=2)
    a = _file(tmp_path, batch, np.arange(1, 121), "a")  # the rollover's files, say
    b = _file(tmp_path, batch, np.arange(81, 201), "b")  # a later export of reports 81-200
    for order in ([a, b], [b, a]):
        result = agg.aggregate(spec, order, workers=1, progress=False)
        assert result.tally == _once(spec, batch, np.arange(1, 201)) == decode(spec, batch)
        assert (result.files, result.reports, result.repeats, result.unmarked) == (2, 200, 40, [])
    # without the numbers, the two files count 240 reports (as they all did before issue 24)
    a.unlink()
    b.unlink()
    plain = [_file(tmp_path, batch, r, f"p{i}", store=None) for i, r in enumerate((range(1, 121), range(81, 201)))]
    unmarked = agg.aggregate(spec, plain, workers=1, progress=False)
    assert unmarked.reports == 240 and unmarked.repeats == 0 and unmarked.unmarked == [str(p) for p in plain]


def test_identical_files_count_once_and_the_copy_is_compared_not_tallied(tmp_path: Path) -> None:
    spec, batch = _spec("krr"), _store("krr", 130, seed=3)
    a = _file(tmp_path, batch, np.arange(1, 131), "a")
    b = _file(tmp_path / "elsewhere", batch, np.arange(1, 131), "b")
    result = agg.aggregate(spec, [a, b], workers=0, progress=False)
    assert result.tally == decode(spec, batch) and (result.reports, result.repeats) == (130, 130)
    assert (result.files, result.parts) == (2, pq.ParquetFile(a).num_row_groups)  # b's row groups are not read


def test_disjoint_files_of_one_store_and_files_of_two_stores_read_no_id(tmp_path: Path, monkeypatch) -> None:
    spec, batch, other = _spec("oue"), _store("oue", 300, seed=4), _store("oue", 100, seed=5)
    _file(tmp_path, batch, np.arange(1, 101), "a")
    _file(tmp_path, batch, np.r_[101:151, 170:201], "b")
    _file(tmp_path, batch, np.arange(201, 301), "c", day=DAY + 1)
    _file(tmp_path, other, np.arange(1, 101), "d", store=S2)  # another store's reports 1-100

    def no_reading(*args: object) -> None:
        raise AssertionError("the fast path read report ids")

    monkeypatch.setattr(agg_once, "check_repeat", no_reading)
    monkeypatch.setattr(agg_once, "spill_ids", no_reading)
    result = agg.aggregate(spec, [tmp_path], workers=1, progress=False)
    want = _once(spec, batch, np.r_[1:151, 170:301]).merge(decode(spec, other))
    assert result.tally == want and (result.files, result.reports, result.repeats) == (4, 381, 0)


@pytest.mark.parametrize("seed", range(6))
def test_any_files_of_a_store_count_the_union_of_their_reports(seed: int, tmp_path: Path) -> None:
    """Random subsets of a store's 400 reports as files (several runs each, some files alike)."""
    rng = np.random.default_rng(seed)
    spec, batch = _spec("febsf-oue"), _store("febsf-oue", 400, seed=6)
    held = []
    for i in range(int(rng.integers(2, 7))):
        cuts = np.sort(rng.choice(np.arange(1, 401), size=2 * int(rng.integers(1, 4)), replace=False))
        numbers = np.concatenate([np.arange(a, b + 1) for a, b in cuts.reshape(-1, 2)])
        held.append(numbers)
        _file(tmp_path, batch, numbers, f"f{i}", day=DAY + int(rng.integers(0, 2)))
    result = agg.aggregate(spec, [tmp_path], workers=0, progress=False)
    union = np.unique(np.concatenate(held))
    assert result.tally == _once(spec, batch, union)
    assert (result.reports, result.repeats) == (union.size, sum(h.size for h in held) - union.size)


def test_the_overlap_path_on_dask_equals_the_serial_one(tmp_path: Path, cluster: object) -> None:
    spec, batch = _spec("krr"), _store("krr", 500, seed=7)
    _file(tmp_path, batch, np.arange(1, 301), "000-rollover")
    _file(tmp_path, batch, np.arange(301, 401), "001-rollover")
    _file(tmp_path, batch, np.arange(1, 501), "day")
    result = agg.aggregate(spec, [tmp_path], scheduler=cluster.scheduler_address, progress=False)
    assert result.tally == decode(spec, batch) and (result.reports, result.repeats) == (500, 400)


# ---------------------------------------------------------------------------------------------- refusals
def test_two_stores_with_one_id_are_refused_naming_both_files(tmp_path: Path) -> None:
    spec = _spec("krr")
    ours, copied = _store("krr", 100, seed=8), _store("krr", 100, seed=9)  # other reports, same numbers
    a = _file(tmp_path, ours, np.arange(1, 101), "a")
    b = _file(tmp_path, copied, np.arange(51, 101), "b")
    with pytest.raises(ReportError) as err:
        agg.aggregate(spec, [a, b], workers=1, progress=False)
    message = str(err.value)
    assert f"{a} (row 50) and {b} (row 0) both say they hold report 51 of store {S1}" in message
    assert "--unique-ids" in message
    # counted by id instead, the two stores' reports are all distinct
    assert agg.aggregate(spec, [a, b], workers=1, progress=False, unique_ids=True).reports == 150


def test_a_copy_with_another_payload_is_refused(tmp_path: Path) -> None:
    spec, batch = _spec("apldp"), _store("apldp", 90, seed=10)
    a = _file(tmp_path, batch, np.arange(1, 91), "a")
    altered = take(batch, np.arange(90))
    altered.columns["level"][60] = 1 - altered.columns["level"][60]
    b = _file(tmp_path, altered, np.arange(1, 91), "b")
    with pytest.raises(ReportError, match=rf"held twice with different payloads \(level\): {a} row 60 and {b} row 60"):
        agg.aggregate(spec, [a, b], workers=1, progress=False)
    with pytest.raises(ReportError, match=r"held twice with different payloads \(level\)"):
        agg.aggregate(spec, [a, b], workers=1, progress=False, unique_ids=True)


def test_a_file_whose_numbers_are_malformed_is_bad(tmp_path: Path) -> None:
    spec, batch = _spec("krr"), _store("krr", 50, seed=11)
    good = _file(tmp_path, batch, np.arange(1, 51), "good")
    table = batch.to_arrow()
    lying = tmp_path / "lying.parquet"
    pq.write_table(table.replace_schema_metadata({**table.schema.metadata, **Origin.of(S1, [1, 2]).metadata()}), lying)
    with pytest.raises(ReportError, match=rf"{lying}: the file's pldp.numbers name 2 reports, but it holds 50"):
        agg.aggregate(spec, [good, lying], workers=1, progress=False)
    result = agg.aggregate(spec, [good, lying], workers=1, progress=False, skip_bad=True)
    assert result.skipped == [(str(lying), "the file's pldp.numbers name 2 reports, but it holds 50")]
    assert result.reports == 50


def test_a_bad_file_that_others_reports_were_counted_from_is_refused(tmp_path: Path) -> None:
    spec, batch = _spec("krr"), _store("krr", 100, seed=12)
    bad = take(batch, np.arange(100))
    bad.columns["item"][5] = 9  # out of range, in a row no other file holds
    keeper = write_reports(bad, tmp_path, DAY, "a", row_group=ROW_GROUP, origin=Origin.of(S1, np.arange(1, 101)))
    other = _file(tmp_path, batch, np.arange(51, 101), "b")
    with pytest.raises(ReportError, match=rf"{keeper} was left out as bad .* but {other} holds some of its reports"):
        agg.aggregate(spec, [keeper, other], workers=1, progress=False, skip_bad=True)
    with pytest.raises(ReportError, match="row 5: item 9 is not in"):  # without skip_bad: the bad file itself
        agg.aggregate(spec, [keeper, other], workers=1, progress=False)


# ---------------------------------------------------------------------------------------------- unique ids
@pytest.fixture
def collectors(tmp_path: Path) -> tuple[Spec, list[Path]]:
    """Three stores' files (one unmarked, as an older pldp wrote it) with retries across them."""
    spec = _spec("apldp")
    a, b, c = _store("apldp", 150, 13), _store("apldp", 120, 14), _store("apldp", 90, 15)
    retried = take(a, np.arange(100, 130))
    b_held = ReportBatch(
        spec.id,
        np.concatenate([b.ids, retried.ids]),
        {k: np.concatenate([b.columns[k], retried.columns[k]]) for k in b.columns},
        spec.root,
    )  # collector b stored a retry of a's reports 101-130 as its own 121-150
    files = [
        _file(tmp_path / "a", a, np.arange(1, 151), "a"),
        _file(tmp_path / "b", b_held, np.arange(1, 151), "b", store=S2),
        _file(tmp_path / "c", take(a, np.arange(140, 150)), np.arange(1, 11), "c", store=None),  # a's last 10
        _file(tmp_path / "c", c, np.arange(1, 91), "c2", store=None),
        _file(tmp_path / "a", a, np.arange(121, 151), "a-again"),  # one store's overlap too
    ]
    return spec, files


@pytest.mark.parametrize("on_dask", [False, True], ids=["serial", "dask"])
def test_unique_ids_count_every_id_once_as_read_unique_does(
    on_dask: bool, collectors: tuple, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    spec, files = collectors
    monkeypatch.setattr(unique, "PARTITION_ROWS", 64)  # 360 ids: 8 partitions
    assert unique.partition_bits(360) == 3
    options = {"scheduler": request.getfixturevalue("cluster").scheduler_address} if on_dask else {"workers": 1}
    merged, dropped = read_unique(files, spec)
    spill = tmp_path / "spill"
    spill.mkdir()
    result = agg.aggregate(spec, files, progress=False, unique_ids=True, spill_dir=spill, **options)
    assert result.tally == decode(spec, merged) and result.reports == len(merged) == 360
    assert result.repeats == dropped == 30 + 10 + 30
    assert list(spill.iterdir()) == []  # the scratch files are gone
    default = agg.aggregate(spec, files, progress=False, **options)  # only one store's overlap found
    assert (default.reports, default.repeats) == (400, 30)
    assert default.unmarked == [str(files[2]), str(files[3])]


def test_unique_ids_compare_whole_ids_not_only_their_first_bytes(tmp_path: Path) -> None:
    """Crafted ids that share their first 8 bytes are different reports, found as candidates and
    told apart by their last 8; one true repeat is dropped."""
    spec, batch = _spec("krr"), _store("krr", 5, seed=19)
    words = np.array([(7, 1), (7, 2), (8, 1), (7, 2), (9, 9)], dtype=np.uint64)
    crafted = ReportBatch(spec.id, words.view(np.uint8).reshape(5, 16), batch.columns, spec.root)
    crafted.columns["item"][3] = crafted.columns["item"][1]  # the repeat's payload is its first copy's
    files = [
        _file(tmp_path, crafted, [1, 2, 3], "a", store=None),
        _file(tmp_path, crafted, [4, 5], "b", store=S2),
    ]
    merged, dropped = read_unique(files, spec)
    result = agg.aggregate(spec, files, workers=1, progress=False, unique_ids=True)
    assert result.tally == decode(spec, merged) and (result.reports, result.repeats) == (4, 1) == (len(merged), dropped)


def test_unique_ids_refuse_or_skip_a_file_with_a_missing_id(tmp_path: Path) -> None:
    spec, batch = _spec("krr"), _store("krr", 60, seed=16)
    good = _file(tmp_path, batch, np.arange(1, 61), "good", store=None)
    table = _store("krr", 20, seed=17).to_arrow()
    ids = table.column("id").to_pylist()
    ids[7] = None
    holed = tmp_path / "holed.parquet"
    pq.write_table(table.set_column(1, pa.field("id", pa.binary(16)), pa.array(ids, pa.binary(16))), holed)
    with pytest.raises(ReportError, match=f"{holed}: row 7: the report id is missing"):
        agg.aggregate(spec, [good, holed], workers=1, progress=False, unique_ids=True)
    result = agg.aggregate(spec, [good, holed], workers=1, progress=False, unique_ids=True, skip_bad=True)
    assert result.skipped == [(str(holed), "row 7: the report id is missing")] and result.reports == 60


# ---------------------------------------------------------------------------------------------- the CLI
def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pldp.cli", "aggregate", *map(str, args), "--workers", "0", "--no-progress"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_counts_once_says_how_many_repeats_and_warns_of_unmarked_files(collectors: tuple, tmp_path: Path) -> None:
    spec, files = collectors
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(spec.to_json())
    out = tmp_path / "est.json"
    done = _cli(spec_file, *files, "--json", out)
    assert done.returncode == 0, done.stderr
    assert "5 files (" in done.stdout and "400 reports" in done.stdout
    assert "30 repeats not counted: files that hold the same reports of one collector count each once" in done.stdout
    assert "pldp: warning: 2 of 5 files do not name the collector store and report numbers" in done.stderr
    assert f"{files[2]}, {files[3]}" in done.stderr and "--unique-ids counts every report id once" in done.stderr
    assert json.loads(out.read_text())["repeats"] == 30
    by_id = _cli(spec_file, *files, "--unique-ids", "--spill-dir", tmp_path, "--json", out)
    assert by_id.returncode == 0, by_id.stderr
    assert "360 reports" in by_id.stdout and "70 repeats not counted" in by_id.stdout and "warning" not in by_id.stderr
    got = json.loads(out.read_text())
    assert got["n"] == 360 and got["repeats"] == 70


def test_cli_exits_1_on_copies_that_differ(tmp_path: Path) -> None:
    spec = _spec("krr")
    a = _file(tmp_path, _store("krr", 40, 18), np.arange(1, 41), "a")
    b = _file(tmp_path, _store("krr", 40, 19), np.arange(1, 41), "b")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(spec.to_json())
    done = _cli(spec_file, a, b)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"pldp: {a} (row 0) and {b} (row 0) both say they hold report 1 of store {S1}")
