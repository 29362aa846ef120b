"""Aggregating report files (pldp.aggregate, ``pldp aggregate``): the tally of any set of files,
serially and on Dask, equals ``decode`` of their reports; a bad file is named with its row, or
left out whole with ``skip_bad``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import pldp
from pldp import aggregate as agg
from pldp.aggregate import parts as agg_parts
from pldp.aggregate import run as agg_run
from pldp.bitcount import WIDE, count_bits
from pldp.client import Client
from pldp.deploy import ReportBatch, Spec, decode
from pldp.deploy.estimates import TIDY_COLUMNS, campaign_estimate
from pldp.deploy.files import report_files, write_reports
from pldp.errors import ParameterError, ReportError
from tests.deploy_cases import answers_of, oracle_cases, spec_of, words

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

CASES = oracle_cases()
#: Oracles aggregated over a layout of files: direct, unary, padding, leveled, several attributes.
LAYOUT_CASES = ("krr", "idue-opt2", "oue-ps", "febsf-oue", "mpldp")
#: Reports per file: three days, two files a day (one file smaller than a row group, one empty).
SIZES = ((130, 45), (0, 101), (77, 150))
ROW_GROUP = 40
DAY = 20000


def _spec(name: str) -> Spec:
    return spec_of(CASES[name], name)


def _batch(name: str, n: int, seed: int) -> ReportBatch:
    spec = _spec(name)
    if n == 0:  # built here: Client.reports([]) raises IndexError (pldp.client draws words for no report)
        cols = {
            c.name: np.zeros((0, c.nbytes), np.uint8) if c.kind == "bits" else np.zeros(0, np.int64)
            for c in spec.root.columns()
        }
        return ReportBatch(spec.id, np.zeros((0, 16), np.uint8), cols, spec.root)
    answers, kw = answers_of(name, CASES[name], n, np.random.default_rng(seed))
    return Client(spec, random=words(seed)).reports(answers, **kw)


def _decode_all(spec: Spec, paths: list[Path]) -> object:
    """The reference: ``decode`` of every report of the files, read whole (ids, spec column and all)."""
    return decode(spec, pa.concat_tables([pq.read_table(p) for p in paths]))


def _groups(n: int) -> int:
    return -(-n // ROW_GROUP)


def _parts(files: list[Path]) -> int:
    """Row groups of the files (pyarrow writes an empty table as one empty row group)."""
    return sum(pq.ParquetFile(f).num_row_groups for f in files)


@pytest.fixture(scope="module")
def layouts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[Path, list[Path]]]:
    """Per layout case: a root with its files (3 days x 2 files, row groups of 40), and the files."""
    out = {}
    for name in LAYOUT_CASES:
        root = tmp_path_factory.mktemp(name)
        files = []
        for day, sizes in enumerate(SIZES):
            for i, n in enumerate(sizes):
                batch = _batch(name, n, seed=100 * day + i)
                files.append(write_reports(batch, root, DAY + day, name=f"part{i}", row_group=ROW_GROUP))
        out[name] = (root, files)
    return out


@pytest.fixture(scope="module")
def cluster() -> object:
    """One local Dask cluster of two single-threaded workers for the whole module."""
    distributed = pytest.importorskip("dask.distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as local:
        yield local


# ---------------------------------------------------------------------------------------------- bit counts
@pytest.mark.parametrize("nbytes", [1, 13, WIDE, WIDE + 1])
def test_count_bits_counts_every_position_of_any_width(nbytes: int) -> None:
    rng = np.random.default_rng(nbytes)
    rows = rng.integers(0, 256, size=(3001, nbytes + 1), dtype=np.uint8)[:, 1:]  # strided, not contiguous
    want = np.unpackbits(rows, axis=1).sum(axis=0)
    got = count_bits(rows)
    assert got.dtype == np.int64 and got.tolist() == want.tolist()
    assert count_bits(rows[:0]).tolist() == [0] * (8 * nbytes)


def test_count_bits_counts_across_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blocks of 7 rows (and of 1 row on the wide path): the block boundaries lose no row."""
    monkeypatch.setattr("pldp.bitcount._BLOCK_BYTES", 7 * 13)
    rows = np.random.default_rng(3).integers(0, 256, size=(100, 13), dtype=np.uint8)
    assert count_bits(rows).tolist() == np.unpackbits(rows, axis=1).sum(axis=0).tolist()
    wide = np.random.default_rng(4).integers(0, 256, size=(10, WIDE + 3), dtype=np.uint8)
    assert count_bits(wide).tolist() == np.unpackbits(wide, axis=1).sum(axis=0).tolist()


# ---------------------------------------------------------------------------------------------- one part
@pytest.mark.parametrize("name", list(CASES))
def test_a_part_tallies_as_decode_does_for_every_oracle(name: str, tmp_path: Path) -> None:
    spec = _spec(name)
    path = write_reports(_batch(name, 150, seed=7), tmp_path, DAY, row_group=ROW_GROUP)
    table = pq.read_table(path)
    whole = agg.tally_part(spec, path)
    assert whole == decode(spec, table) and whole.n == 150 and whole.fingerprint == spec.id
    for g in range(_groups(150)):  # row group by row group, each the decode of its slice
        assert agg.tally_part(spec, str(path), g) == decode(spec, table.slice(ROW_GROUP * g, ROW_GROUP))


@pytest.mark.parametrize("name", ["krr", "oue", "febsf-krr"])
def test_the_spec_column_is_read_only_where_statistics_do_not_prove_it(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = _spec(name)
    table = _batch(name, 90, seed=8).to_arrow()
    checked: list[int] = []
    check = agg_parts.check_spec_column
    monkeypatch.setattr(
        agg_parts, "check_spec_column", lambda column, spec_id: checked.append(len(column)) or check(column, spec_id)
    )
    proven = write_reports(_batch(name, 90, seed=8), tmp_path, DAY, row_group=ROW_GROUP)
    assert agg.tally_part(spec, proven) == decode(spec, table) and checked == []
    plain = tmp_path / "plain.parquet"
    pq.write_table(table, plain, row_group_size=ROW_GROUP, write_statistics=False, use_dictionary=False)
    assert not pq.ParquetFile(plain).metadata.row_group(0).column(0).is_stats_set
    assert agg.tally_part(spec, plain) == decode(spec, table) and checked == [40, 40, 10]


def test_an_item_column_of_another_integer_type_counts_alike(tmp_path: Path) -> None:
    spec = _spec("iprr")
    table = _batch("iprr", 60, seed=9).to_arrow()
    for t in (pa.int64(), pa.uint8(), pa.uint64()):
        wide = table.set_column(2, "item", table.column("item").cast(t))
        pq.write_table(wide, tmp_path / f"{t}.parquet")
        assert agg.tally_part(spec, tmp_path / f"{t}.parquet") == decode(spec, table)


def _with(batch: ReportBatch, column: str, row: int, value: object) -> ReportBatch:
    cols = {k: v.copy() for k, v in batch.columns.items()}
    cols[column][row] = value
    return ReportBatch(batch.spec, batch.ids, cols, batch.root)


@pytest.mark.parametrize(
    ("name", "column", "value", "reason"),
    [
        ("krr", "item", 4, "item 4 is not in [0, 4)"),
        ("krr", "item", -1, "it has no item (null)"),  # negative items are written as nulls
        ("oue", "bits", 0b11111111, "it sets padding bits beyond bit 4"),
        ("febsf-krr", "level", 10, "level 10 is out of range"),
        ("mpldp", "a1.level", 3, "level 3 is out of range"),
    ],
)
def test_a_bad_report_is_named_by_file_row_group_and_row(
    name: str, column: str, value: int, reason: str, tmp_path: Path
) -> None:
    """Row 7 of row group 2 is bad: the message names the file, the group and the file's row 87;
    whichever kernel counts the spec (direct, unary, or decode's own checks)."""
    spec = _spec(name)
    batch = _with(_batch(name, 150, seed=10), column, 2 * ROW_GROUP + 7, value)
    path = write_reports(batch, tmp_path, DAY, row_group=ROW_GROUP)
    with pytest.raises(ReportError) as err:
        agg.tally_part(spec, path)
    assert str(err.value) == f"{path}: row group 2, row 87: {reason}" and err.value.index == 87
    for g in (0, 1, 3):  # the other row groups are good on their own
        assert agg.tally_part(spec, path, g).n == (ROW_GROUP if g < 3 else 30)


def test_a_negative_item_written_as_a_value_is_named(tmp_path: Path) -> None:
    """pldp writes a negative item as a null, another writer may write the value itself."""
    spec = _spec("krr")
    table = _batch("krr", 100, seed=13).to_arrow()
    items = table.column("item").to_numpy().copy()
    items[53] = -5
    path = tmp_path / "negative.parquet"
    pq.write_table(table.set_column(2, "item", pa.array(items, pa.int32())), path, row_group_size=ROW_GROUP)
    with pytest.raises(ReportError) as err:
        agg.tally_part(spec, path)
    assert str(err.value) == f"{path}: row group 1, row 53: item -5 is not in [0, 4)" and err.value.index == 53


def test_a_row_of_another_spec_is_named(tmp_path: Path) -> None:
    spec, other = _spec("krr"), _spec("urr")
    table = _batch("krr", 100, seed=11).to_arrow()
    specs = pa.array([spec.id] * 47 + [other.id] + [spec.id] * 52)
    path = tmp_path / "mixed.parquet"
    pq.write_table(table.set_column(0, "spec", specs), path, row_group_size=ROW_GROUP)
    with pytest.raises(ReportError) as err:
        agg.tally_part(spec, path)
    assert str(err.value) == f"{path}: row group 1, row 47: it names spec {other.id!r}, not {spec.id}"
    assert err.value.index == 47


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("truncate", "not a readable Parquet file"),
        ("missing", "no such file or folder"),
        ("other spec", "the file holds reports of spec "),
        ("bad schema", "column item must hold integers, got string"),
        ("extra column", "the file's columns ['extra', 'id', 'item', 'spec'] are not ['id', 'item', 'spec']"),
    ],
)
def test_an_unreadable_or_foreign_file_is_named(damage: str, message: str, tmp_path: Path) -> None:
    spec = _spec("krr")
    table = _batch("krr", 50, seed=12).to_arrow()
    path = tmp_path / "bad.parquet"
    if damage == "truncate":
        pq.write_table(table, path)
        path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    elif damage == "other spec":
        path = write_reports(_batch("urr", 50, seed=12), tmp_path, DAY)
    elif damage == "bad schema":
        pq.write_table(table.set_column(2, "item", table.column("item").cast(pa.string())), path)
    elif damage == "extra column":
        pq.write_table(table.append_column("extra", pa.array(np.zeros(50))), path)
    with pytest.raises(ReportError) as err:
        agg.tally_part(spec, path)
    assert str(err.value).startswith(f"{path}: {message}") and err.value.index is None


def test_an_empty_file_is_an_empty_tally(tmp_path: Path) -> None:
    for name in ("krr", "oue", "febsf-oue", "mpldp"):
        spec = _spec(name)
        path = write_reports(_batch(name, 0, seed=1), tmp_path, DAY)
        assert agg.tally_part(spec, path) == decode(spec, _batch(name, 0, seed=1)) and agg.tally_part(spec, path).n == 0


# ---------------------------------------------------------------------------------------------- aggregate
@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_aggregate_serially_equals_decode_of_every_report(name: str, layouts: dict) -> None:
    root, files = layouts[name]
    spec = _spec(name)
    result = agg.aggregate(spec, [root], workers=1, progress=False)
    assert result.tally == _decode_all(spec, files)
    n = sum(sum(s) for s in SIZES)
    assert (result.files, result.parts, result.reports, result.tally.n) == (6, _parts(files), n, n)
    assert result.skipped == [] and result.seconds > 0


@pytest.mark.parametrize("name", LAYOUT_CASES)
def test_aggregate_on_dask_equals_decode_of_every_report(
    name: str, layouts: dict, cluster: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(agg, "FANOUT", 2)  # a deeper tree: 5 files with reports -> 3 -> 2 -> 1
    root, files = layouts[name]
    spec = _spec(name)
    result = agg.aggregate(spec, [root], scheduler=cluster.scheduler_address, progress=False)
    assert result.tally == _decode_all(spec, files)
    assert (result.files, result.parts, result.skipped) == (6, _parts(files), [])


def test_progress_counts_the_row_groups(layouts: dict, cluster: object, capsys: pytest.CaptureFixture) -> None:
    root, files = layouts["krr"]
    result = agg.aggregate(_spec("krr"), [root], scheduler=cluster.scheduler_address, progress=True)
    assert result.tally == _decode_all(_spec("krr"), files)
    assert f"/{_parts(files)}" in capsys.readouterr().err  # the tqdm bar: "aggregate: ... 16/16 [...]"


def test_workers_choose_between_two_local_workers_and_this_process(
    layouts: dict, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No scheduler: 2 local workers by default, serial for 0 or 1. (The local cluster itself is
    pldp.parallel.dask_client, which tests/test_runner.py starts.)"""
    root, _ = layouts["krr"]
    calls: list[tuple[str, int]] = []
    serial = agg_run._run_serial

    def fake_dask(spec, plan, skip_bad, bar, *, workers, scheduler):
        calls.append(("dask", workers))
        return serial(spec, plan, skip_bad, bar)

    monkeypatch.setattr(agg_run, "_run_dask", fake_dask)
    monkeypatch.setattr(agg_run, "_run_serial", lambda *a: calls.append(("serial", 0)) or serial(*a))
    for workers in (None, 0, 1, 3):
        assert agg.aggregate(_spec("krr"), [root], workers=workers, progress=False).tally.n == 503
    assert calls == [("dask", 2), ("serial", 0), ("serial", 0), ("dask", 3)]


def test_a_file_named_twice_counts_once(layouts: dict) -> None:
    root, files = layouts["krr"]
    spec = _spec("krr")
    result = agg.aggregate(spec, [files[0], root, str(files[0])], workers=0, progress=False)
    assert result.files == 6 and result.tally == _decode_all(spec, files)
    assert agg.report_sources(spec, [files[2], root])[:2] == [str(files[2]), str(files[0])]


def test_sources_that_name_no_report_file_are_refused(tmp_path: Path) -> None:
    spec = _spec("krr")
    with pytest.raises(ParameterError, match="without report files of spec"):
        agg.aggregate(spec, [tmp_path], workers=1)
    with pytest.raises(ParameterError, match="no report files given"):
        agg.aggregate(spec, [], workers=1)
    with pytest.raises(ParameterError, match="cannot open this URL"):
        agg.aggregate(spec, ["nosuchprotocol://x/y.parquet"], workers=1)
    with pytest.raises(ParameterError, match="workers must be >= 0"):
        agg.aggregate(spec, [tmp_path], workers=-1)


def test_fsspec_urls_memory_serially_and_file_on_dask(layouts: dict, cluster: object) -> None:
    fsspec = pytest.importorskip("fsspec")
    root, files = layouts["idue-opt2"]
    spec = _spec("idue-opt2")
    want = _decode_all(spec, files)
    memory = fsspec.filesystem("memory")
    for f in files:  # the same layout in this process's memory filesystem
        memory.pipe(f"/agg/{f.relative_to(root).as_posix()}", f.read_bytes())
    result = agg.aggregate(spec, ["memory://agg"], workers=1, progress=False)
    assert result.tally == want and result.files == 6
    assert agg.tally_part(spec, f"memory://agg/{files[0].relative_to(root).as_posix()}") == _decode_all(spec, files[:1])
    on_dask = agg.aggregate(spec, [root.as_uri()], scheduler=cluster.scheduler_address, progress=False)
    assert on_dask.tally == want and on_dask.files == 6


@pytest.fixture(scope="module")
def bad_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Bad krr files: an out-of-range item in row 7 of row group 2, another spec's file, a truncated file."""
    root = tmp_path_factory.mktemp("bad")
    bad_item = _with(_batch("krr", 150, seed=20), "item", 2 * ROW_GROUP + 7, 9)
    other = root / "other.parquet"
    pq.write_table(_batch("urr", 30, seed=21).to_arrow(), other)
    truncated = root / "truncated.parquet"
    shutil.copyfile(write_reports(_batch("krr", 60, seed=22), root / "t", DAY), truncated)
    truncated.write_bytes(truncated.read_bytes()[:-100])
    return {
        "item": write_reports(bad_item, root, DAY, name="bad-item", row_group=ROW_GROUP),
        "other": other,
        "truncated": truncated,
    }


@pytest.mark.parametrize("on_dask", [False, True], ids=["serial", "dask"])
def test_a_bad_file_stops_the_run_with_its_file_and_row(
    on_dask: bool, layouts: dict, bad_files: dict, request: pytest.FixtureRequest
) -> None:
    _, files = layouts["krr"]
    options = {"scheduler": request.getfixturevalue("cluster").scheduler_address} if on_dask else {"workers": 1}
    with pytest.raises(ReportError) as err:
        agg.aggregate(_spec("krr"), [*files, bad_files["item"]], progress=False, **options)
    assert str(err.value) == f"{bad_files['item']}: row group 2, row 87: item 9 is not in [0, 4)"


@pytest.mark.parametrize("on_dask", [False, True], ids=["serial", "dask"])
def test_skip_bad_leaves_out_exactly_the_bad_files_whole(
    on_dask: bool, layouts: dict, bad_files: dict, request: pytest.FixtureRequest
) -> None:
    _, files = layouts["krr"]
    spec = _spec("krr")
    options = {"scheduler": request.getfixturevalue("cluster").scheduler_address} if on_dask else {"workers": 1}
    sources = [bad_files["truncated"], *files[:3], bad_files["item"], *files[3:], bad_files["other"]]
    result = agg.aggregate(spec, sources, skip_bad=True, progress=False, **options)
    # the bad-item file's good row groups 0, 1 and 3 are not counted either: all or nothing
    assert result.tally == _decode_all(spec, files)
    assert [s for s, _ in result.skipped] == [str(bad_files[k]) for k in ("truncated", "item", "other")]
    reasons = [r for _, r in result.skipped]
    assert reasons[0].startswith("not a readable Parquet file")
    assert reasons[1] == "row group 2, row 87: item 9 is not in [0, 4)"
    assert reasons[2] == f"the file holds reports of spec {_spec('urr').id}, not {spec.id}"
    assert (result.files, result.reports) == (6, sum(sum(s) for s in SIZES))


# ---------------------------------------------------------------------------------------------- the CLI
def _cli(*args: str | Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pldp.cli", "aggregate", *map(str, args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_cli_prints_and_writes_the_estimate_of_the_files(layouts: dict, bad_files: dict, tmp_path: Path) -> None:
    root, files = layouts["mpldp"]
    spec = _spec("mpldp")
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(spec.to_json())
    out, tidy = tmp_path / "estimate.json", tmp_path / "estimate.parquet"
    options = ["--method", "norm_sub", "--level", "0.9", "--json", out, "--parquet", tidy, "--workers", "1"]
    done = _cli(spec_file, root, *options, "--no-progress")
    assert done.returncode == 0, done.stderr
    got = json.loads(out.read_text())
    tally = _decode_all(spec, files)
    want = campaign_estimate(spec, tally, "norm_sub", 0.9)
    est = pldp.estimate(spec.mechanism(), tally, "norm_sub")
    assert got["attributes"][1]["frequencies"] == est["attribute 1"].frequencies.tolist()
    assert got == {**want, "files": 6, "repeats": 0, "skipped": []}
    assert f"campaign {spec.id}: n = {tally.n}, method norm_sub, 90% intervals" in done.stdout
    assert "6 files" in done.stdout
    table = pq.read_table(tidy).to_pydict()
    assert tuple(table) == TIDY_COLUMNS
    assert table["frequency"] == [f for part in want["attributes"] for f in part["frequencies"]]
    assert table["attribute"] == ["attribute 0"] * 3 + ["attribute 1"] * 4


def test_cli_exits_1_naming_the_bad_file_or_skips_it(
    layouts: dict, bad_files: dict, tmp_path: Path, cluster: object
) -> None:
    root, files = layouts["krr"]
    spec_file = tmp_path / "spec.json"
    spec_file.write_text(_spec("krr").to_json())
    failed = _cli(spec_file, root, bad_files["item"], "--workers", "1", "--no-progress")
    assert failed.returncode == 1 and failed.stdout == ""
    assert f"{bad_files['item']}: row group 2, row 87: item 9 is not in [0, 4)" in failed.stderr
    out = tmp_path / "estimate.json"
    options = ["--skip-bad", "--json", out, "--no-progress", "--scheduler", cluster.scheduler_address]
    skipped = _cli(spec_file, root, bad_files["item"], *options)
    assert skipped.returncode == 0, skipped.stderr
    assert f"skipped {bad_files['item']}: row group 2, row 87" in skipped.stderr
    got = json.loads(out.read_text())
    assert got["n"] == _decode_all(_spec("krr"), files).n and got["files"] == 6
    reason = "row group 2, row 87: item 9 is not in [0, 4)"
    assert got["skipped"] == [{"file": str(bad_files["item"]), "reason": reason}]
    assert report_files(root, _spec("krr").id) == files
