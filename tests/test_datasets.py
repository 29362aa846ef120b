"""Bundled real datasets (checksums, exact counts, labels, file readers) and synthetic generators."""

from __future__ import annotations

import bz2
import gzip
import hashlib
import importlib.resources
import json

import numpy as np
import pytest

from pldp.datasets import (
    DATASET_NAMES,
    LabeledItems,
    item_labels,
    list_datasets,
    load_adult_country,
    load_adult_education,
    load_bank_job,
    load_clothing,
    load_dataset,
    load_kosarak,
    load_retail,
    power_law_items,
    random_item_per_user,
    uniform_items,
    zipf_probabilities,
)
from pldp.errors import ParameterError
from pldp.itemsets import ItemSets

DATA = importlib.resources.files("pldp.datasets").joinpath("data")
MANIFEST = json.loads(DATA.joinpath("MANIFEST.json").read_text())["files"]
K = 4.0  # sampling checks: an empirical frequency may lie K binomial standard errors from its law

# (users, items, records in the source, distinct (user, item) pairs returned)
EXPECTED = {
    "education": (32_561, 16, 32_561, 32_561),
    "country": (48_842, 42, 48_842, 48_842),
    "job": (45_211, 12, 45_211, 45_211),
    "retail": (88_162, 16_470, 908_576, 908_576),
    "clothing": (105_571, 5_850, 192_544, 192_278),
    "kosarak": (36_682, 17_034, 294_009, 294_008),
}


def _bundled_files():
    out = []
    for entry in DATA.iterdir():
        if entry.is_dir():
            out += [f"{entry.name}/{f.name}" for f in entry.iterdir()]
        else:
            out.append(entry.name)
    return sorted(out)


# ----------------------------------------------------------------------------- bundle integrity


@pytest.mark.parametrize("relpath", sorted(MANIFEST))
def test_bundled_file_matches_manifest(relpath):
    meta = MANIFEST[relpath]
    raw = DATA.joinpath(*relpath.split("/")).read_bytes()
    assert len(raw) == meta["bytes"]
    assert hashlib.sha256(raw).hexdigest() == meta["sha256"]
    content = gzip.decompress(raw)
    assert len(content) == meta["content_bytes"]
    assert hashlib.sha256(content).hexdigest() == meta["content_sha256"]


def test_every_bundled_file_is_listed_and_documented():
    files = _bundled_files()
    data_files = [f for f in files if f not in ("MANIFEST.json",) and not f.endswith("/SOURCE.md")]
    assert sorted(data_files) == sorted(MANIFEST)
    for relpath, meta in MANIFEST.items():
        folder = relpath.split("/")[0]
        note = DATA.joinpath(folder, "SOURCE.md").read_text()
        assert meta["sha256"] in note and meta["content_sha256"] in note, relpath
    assert sum(meta["bytes"] for meta in MANIFEST.values()) < 5_000_000


# ----------------------------------------------------------------------------- counts


def _counts(data):
    if isinstance(data, LabeledItems):
        return data.n, len(data.domain), data.n
    return data.n, data.d, int(data.indices.size)


@pytest.mark.parametrize("name", DATASET_NAMES)
def test_loader_counts_exact(name):
    users, items, _, pairs = EXPECTED[name]
    assert _counts(load_dataset(name)) == (users, items, pairs)


def test_list_datasets_agrees_with_loaders():
    infos = list_datasets()
    assert [i.name for i in infos] == list(DATASET_NAMES) == list(EXPECTED)
    for info in infos:
        assert (info.users, info.items, info.records, info.pairs) == EXPECTED[info.name]
        assert info.kind == ("single" if info.name in ("education", "country", "job") else "itemset")
        assert info.source


def test_loaders_are_cached_and_read_only():
    assert load_retail() is load_retail()
    assert load_adult_education() is load_adult_education()
    for arr in (load_retail().indices, load_kosarak().indptr, load_bank_job().items, item_labels("clothing")):
        assert not arr.flags.writeable


# ----------------------------------------------------------------------------- labels


def test_education_labels():
    data = load_adult_education()
    labels = data.domain.labels
    assert "Bachelors" in labels and "HS-grad" in labels
    assert list(labels) == sorted(labels)
    counts = dict(zip(labels, data.counts().tolist(), strict=True))
    assert counts["HS-grad"] == 10_501 and counts["Bachelors"] == 5_355  # adult.data, as widely reported
    assert labels[data.items[0]] == "Bachelors"  # first row of adult.data


def test_country_labels():
    data = load_adult_country()
    labels = data.domain.labels
    assert labels[0] == "?" and "United-States" in labels and "Holand-Netherlands" in labels
    assert int(data.counts()[data.domain.index("Holand-Netherlands")]) == 1


def test_job_labels():
    data = load_bank_job()
    assert data.domain.labels == (
        "admin.",
        "blue-collar",
        "entrepreneur",
        "housemaid",
        "management",
        "retired",
        "self-employed",
        "services",
        "student",
        "technician",
        "unemployed",
        "unknown",
    )
    counts = dict(zip(data.domain.labels, data.counts().tolist(), strict=True))
    assert counts["blue-collar"] == 9_732 and counts["unknown"] == 288


def test_itemset_labels_and_order():
    assert np.array_equal(item_labels("retail"), np.arange(16_470))  # retail ids are exactly 0..16469
    ko = item_labels("kosarak")
    assert ko.size == 17_034 and np.all(np.diff(ko) > 0)
    cl = item_labels("clothing")
    assert cl.size == 5_850 and cl[0] == 123_373 and cl[-1] == 2_966_087
    retail = load_retail()
    assert retail.indices[: retail.indptr[1]].tolist() == list(range(30))  # line 1: "0 1 2 ... 29"
    kosarak = load_kosarak()
    assert ko[kosarak.indices[: kosarak.indptr[3]]].tolist() == [1, 2, 3, 1, 4, 5, 6, 7]  # lines 1-3
    clothing = load_clothing()
    assert cl[clothing.indices[0]] == 2_260_466  # first record: user 420272, item 2260466
    # Kosarak support of item 6 in the prefix (SOURCE.md: 0.6062 of 36,682 users)
    assert kosarak.item_counts()[np.searchsorted(ko, 6)] / kosarak.n == pytest.approx(0.6062, abs=5e-5)
    with pytest.raises(ParameterError):
        item_labels("education")


# ----------------------------------------------------------------------------- user files


DAT = "7 3 7 10\n\n3\n  10   42 \t 3\r\n5"


@pytest.mark.parametrize("compress", [None, gzip.compress, bz2.compress])
@pytest.mark.parametrize("loader", [load_retail, load_kosarak])
def test_dat_path(tmp_path, loader, compress):
    path = tmp_path / "small.dat"
    raw = DAT.encode()
    path.write_bytes(compress(raw) if compress else raw)
    sets = loader(path)
    name = loader.__name__.removeprefix("load_")
    labels = item_labels(name, path)
    assert labels.tolist() == [3, 5, 7, 10, 42]
    # blank line skipped; the repeated 7 dropped; file order kept within a user
    assert [labels[sets.indices[a:b]].tolist() for a, b in zip(sets.indptr[:-1], sets.indptr[1:], strict=True)] == [
        [7, 3, 10],
        [3],
        [10, 42, 3],
        [5],
    ]
    assert sets.d == 5 and labels[sets.first_items()].tolist() == [7, 3, 10, 5]


def test_dat_path_rejects_other_formats(tmp_path):
    path = tmp_path / "bad.dat"
    path.write_text("1 2\n3 x\n")
    with pytest.raises(ParameterError, match="line 2"):
        load_retail(path)
    with pytest.raises(ParameterError):
        load_kosarak(tmp_path / "missing.dat")


RTR = [(9, 200), (5, 100), (9, 100), (9, 200), (7, 300), (5, 300)]


def _rtr_expected(sets, labels):
    rows = [labels[sets.indices[a:b]].tolist() for a, b in zip(sets.indptr[:-1], sets.indptr[1:], strict=True)]
    assert rows == [[200, 100], [100, 300], [300]]  # users by first record: 9, 5, 7; the repeat dropped
    assert labels.tolist() == [100, 200, 300]


def test_clothing_path_json(tmp_path):
    lines = [json.dumps({"fit": "fit", "user_id": str(u), "item_id": str(i), "rating": "10"}) for u, i in RTR]
    path = tmp_path / "renttherunway_final_data.json.gz"
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    _rtr_expected(load_clothing(path), item_labels("clothing", path))


@pytest.mark.parametrize("extra", [False, True])
def test_clothing_path_csv(tmp_path, extra):
    path = tmp_path / "rtr.csv"
    if extra:
        text = "user_id,item_id,rating,review_date\n" + "".join(f"{u},{i},,2016-04-20\n" for u, i in RTR)
    else:
        text = "user_id,item_id\n" + "".join(f"{u},{i}\n" for u, i in RTR)
    path.write_text(text)
    _rtr_expected(load_clothing(path), item_labels("clothing", path))


def test_load_dataset_errors():
    with pytest.raises(ParameterError):
        load_dataset("nope")
    with pytest.raises(ParameterError):
        load_dataset("job", path="x.csv")


# ----------------------------------------------------------------------------- random item per user


def test_random_item_per_user():
    sets = load_kosarak()
    a = random_item_per_user(sets, np.random.default_rng(7))
    b = random_item_per_user(sets, np.random.default_rng(7))
    assert np.array_equal(a, b)
    assert a.shape == (sets.n,)  # no empty sets in Kosarak
    key = np.repeat(np.arange(sets.n), sets.sizes) * sets.d + sets.indices
    assert np.isin(np.arange(sets.n) * sets.d + a, key).all()  # each item is in its user's set
    assert not np.array_equal(a, random_item_per_user(sets, np.random.default_rng(8)))


def test_random_item_per_user_uniform_and_skips_empty():
    sets = ItemSets.from_lists([[0, 1, 2, 3], [], [4]], 5)
    draws = np.stack([random_item_per_user(sets, np.random.default_rng(s)) for s in range(4000)])
    assert draws.shape == (4000, 2) and np.all(draws[:, 1] == 4)
    freq = np.bincount(draws[:, 0], minlength=5)[:4] / 4000
    assert np.all(np.abs(freq - 0.25) < K * np.sqrt(0.25 * 0.75 / 4000))  # binomial SE 0.007
    empty = ItemSets.from_lists([[], []], 3)
    assert random_item_per_user(empty, np.random.default_rng(0)).size == 0
    with pytest.raises(ParameterError):
        random_item_per_user(sets, 0)


# ----------------------------------------------------------------------------- synthetic generators


def test_uniform_items():
    x = uniform_items(50_000, 7, np.random.default_rng(1))
    assert x.shape == (50_000,) and x.dtype == np.int64 and x.min() == 0 and x.max() == 6
    assert np.all(np.abs(np.bincount(x) / x.size - 1 / 7) < K * np.sqrt(1 / 7 * 6 / 7 / x.size))  # SE 0.0016
    assert np.array_equal(x, uniform_items(50_000, 7, np.random.default_rng(1)))
    assert uniform_items(0, 3, np.random.default_rng(0)).shape == (0,)


def test_power_law_items():
    rng = np.random.default_rng(2)
    x = power_law_items(100_000, 30, rng)
    assert x.shape == (100_000,) and x.dtype == np.int64 and 0 <= x.min() and x.max() < 30
    freq = np.bincount(x, minlength=30) / x.size

    def max_z(p: np.ndarray) -> float:  # largest binomial z-score of the 30 frequencies
        return float(np.max(np.abs(freq - p) / np.sqrt(p * (1 - p) / x.size)))

    assert max_z(zipf_probabilities(30, 2.0)) < K  # P(v) ∝ v^-2 on 1..m
    assert min(max_z(zipf_probabilities(30, a)) for a in (1.9, 2.1)) > K  # power: exponents 1.9, 2.1 rejected
    assert np.array_equal(
        power_law_items(1000, 30, np.random.default_rng(3)), power_law_items(1000, 30, np.random.default_rng(3))
    )
    y = power_law_items(10_000, 30, np.random.default_rng(4), method="scaled")
    assert y.min() == 0 and y.max() == 29 and np.mean(y == 0) > 0.9
    with pytest.raises(ParameterError):
        power_law_items(10, 5, rng, method="other")
    with pytest.raises(ParameterError):
        power_law_items(10, 5, rng, alpha=1.0, method="scaled")
    with pytest.raises(ParameterError):
        power_law_items(10, 0, rng)
