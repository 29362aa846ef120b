"""The experiment runner: seeding, Dask, the per-user path, and its input checks."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pd = pytest.importorskip("pandas")

import pldp  # noqa: E402
from pldp.cli import main  # noqa: E402
from pldp.errors import ParameterError  # noqa: E402
from pldp.experiments import iprr  # noqa: E402
from pldp.experiments.paths import observe, path_of, users_of  # noqa: E402
from pldp.experiments.runner import repeat_rng, run_experiments  # noqa: E402
from pldp.experiments.spec import Experiment  # noqa: E402
from pldp.protocols import MPLDP  # noqa: E402
from pldp.protocols.febsf import FEBSF  # noqa: E402


def _toy_run(setting: dict[str, Any], rng: np.random.Generator) -> list[dict[str, Any]]:
    """A KRR repeat on fixed counts: the squared error of the unbiased estimate, by the setting's path."""
    counts = np.array([400, 300, 200, 100])
    mech = pldp.KRR(float(setting["eps"]), 4)
    tally = observe(mech, counts, rng=rng, path=path_of(setting))
    est = pldp.estimate(mech, tally).counts
    return [{"method": "KRR", "sq": float(np.sum((est - counts) ** 2)), "n": tally.n}]


TOY = Experiment(
    paper="toy",
    name="toy",
    title="toy",
    claim="none",
    settings=[{"eps": 0.5}, {"eps": 2.0}],
    run=_toy_run,
    repeats=3,
)


def test_same_seed_same_table_and_other_seed_differs() -> None:
    a = run_experiments([TOY], seed=7, workers=1, progress=False)
    b = run_experiments([TOY], seed=7, workers=1, progress=False)
    c = run_experiments([TOY], seed=8, workers=1, progress=False)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 2 * 3 and set(a["path"]) == {"count"}
    assert not np.allclose(a["sq"], c["sq"])


def test_repeat_streams_are_the_spawned_children() -> None:
    child = np.random.SeedSequence(11).spawn(3)[2].spawn(2)[1].spawn(4)[3]  # experiment 2, setting 1, repeat 3
    assert repeat_rng(11, 2, 1, 3).random() == np.random.default_rng(child).random()


def test_dask_local_cluster_and_an_existing_scheduler_give_the_serial_numbers() -> None:
    distributed = pytest.importorskip("dask.distributed")
    serial = run_experiments([TOY], seed=3, workers=1, progress=False)
    parallel = run_experiments([TOY], seed=3, workers=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False, dashboard_address=":0") as c:
        remote = run_experiments([TOY], seed=3, scheduler=c.scheduler_address, progress=False)
    pd.testing.assert_frame_equal(serial, remote)


def test_bad_runner_arguments_are_named() -> None:
    with pytest.raises(ParameterError, match="path"):
        run_experiments([TOY], workers=1, progress=False, path="users")
    with pytest.raises(ParameterError, match="trials"):
        run_experiments([TOY], workers=1, progress=False, trials=0)
    with pytest.raises(ParameterError, match="workers"):
        run_experiments([TOY], workers=0, progress=False)
    with pytest.raises(ParameterError, match="path"):
        path_of({"path": "fast"})


def test_cli_rejects_bad_arguments_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["reproduce", "mpldp", "--quick", "--trials", "0", "--no-progress", "--workers", "1"])
    assert exc.value.code == 2
    assert "trials must be >= 1, got 0" in capsys.readouterr().err


def test_users_of_expands_counts_and_level_tables_exactly() -> None:
    (items,) = users_of(np.array([2, 0, 3]))
    assert items.tolist() == [0, 0, 2, 2, 2]
    cells = np.array([[1, 0, 2], [0, 3, 1]])
    x, lv = users_of(cells)
    back = np.zeros_like(cells)
    np.add.at(back, (lv, x), 1)
    np.testing.assert_array_equal(back, cells)
    values, levels = np.zeros((4, 2), dtype=int), np.ones((4, 2), dtype=int)
    assert users_of(values, levels) == (values, levels)
    with pytest.raises(ParameterError, match="integers"):
        users_of(np.array([0.5, 1.0]))
    with pytest.raises(ParameterError, match="non-negative"):
        users_of(np.array([1, -1]))


def test_per_user_path_tallies_every_user_for_each_protocol() -> None:
    rng = np.random.default_rng(5)
    cells = np.array([[30, 10, 5], [20, 20, 15]])
    for proto in (
        FEBSF(np.array([0.5, 1.0]), 0.5, 3, oracle="krr"),
        FEBSF(np.array([0.5, 1.0]), 0.5, 3, oracle="rappor"),
    ):
        a = observe(proto, cells, rng=rng)
        b = observe(proto, cells, rng=rng, path="per-user")
        assert a.n == b.n == cells.sum()
    proto = MPLDP([3, 4], [1.0, 2.0])
    values = np.column_stack([rng.integers(0, 3, 200), rng.integers(0, 4, 200)])
    levels = proto.assign_levels(200, rng)
    assert observe(proto, values, levels, rng=rng, path="per-user").n == 200
    with pytest.raises(ParameterError, match="path"):
        observe(pldp.KRR(1.0, 3), np.array([1, 2, 3]), rng=rng, path="exact")


def test_per_user_and_count_paths_agree_on_the_toy_experiment() -> None:
    """Mean squared error of 200 repeats per path: equal within K = 4 standard errors, and each
    within K SE of the fixed-population theory (the toy's counts are fixed). Power check: at
    eps = 2, where the i.i.d. loss is 10 SE above it, both paths reject the i.i.d. theory."""
    k = 4.0
    tables = {
        p: run_experiments([TOY], seed=1, workers=1, progress=False, trials=200, path=p) for p in ("count", "per-user")
    }
    for eps in (0.5, 2.0):
        a = tables["count"].query("eps == @eps")["sq"].to_numpy()
        b = tables["per-user"].query("eps == @eps")["sq"].to_numpy()
        se = np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size)
        assert abs(a.mean() - b.mean()) < k * se
        mech = pldp.KRR(eps, 4)
        counts = np.array([400, 300, 200, 100])
        fixed, iid = (1000**2 * pldp.theory.expected_l2(mech, counts / 1000, 1000, model=m) for m in ("fixed", "iid"))
        for x in (a, b):
            x_se = x.std(ddof=1) / np.sqrt(x.size)
            assert abs(x.mean() - fixed) < k * x_se
            if eps == 2.0:
                assert abs(x.mean() - iid) > k * x_se
    assert set(tables["per-user"]["path"]) == {"per-user"}


def test_iprr_experiment_runs_on_the_per_user_path() -> None:
    exp = next(e for e in iprr.experiments() if e.name == "fig2_zipf")
    setting = {**exp.grid(quick=True)[0], "path": "per-user"}
    rows = exp.run(setting, np.random.default_rng(0))
    assert {r["method"] for r in rows} >= {"IPRR/NS", "URR/MLE", "KRR/NS"}
    assert all(np.isfinite(r["mse"]) for r in rows)


def test_an_experiment_gets_the_same_streams_alone_and_beside_another_paper() -> None:
    other = Experiment(
        paper="other", name="x", title="x", claim="none", settings=[{"eps": 1.0}], run=_toy_run, repeats=2
    )
    alone = run_experiments([TOY], seed=4, workers=1, progress=False)
    both = run_experiments([other, TOY], seed=4, workers=1, progress=False)
    pd.testing.assert_frame_equal(alone, both[both["paper"] == "toy"].reset_index(drop=True))
