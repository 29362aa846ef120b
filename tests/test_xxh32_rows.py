"""XXH32 of equal-length byte rows in numpy lanes (:func:`pldp.xxh32.xxh32_rows`) against the scalar,
pure-Python :func:`pldp.xxh32.xxh32`, the specification's vectors, and the heavy hitters' fingerprints
it computes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from pldp import xxh32 as xxh32_module
from pldp.errors import ParameterError
from pldp.heavy.strings import FINGERPRINTS, fingerprints
from pldp.xxh32 import xxh32, xxh32_rows

#: Seeds of every kind: zero, small, the largest 32-bit value, one with high bits on both halves.
SEEDS = (0, 1, 2**32 - 1, 0x9E3779B1)


def scalar(rows: np.ndarray, seed: int = 0) -> list[int]:
    """The reference: :func:`xxh32` of each row's bytes."""
    return [xxh32(row.tobytes(), seed) for row in rows]


@pytest.mark.parametrize("length", range(71))
def test_every_length_matches_the_scalar_hash_under_every_seed(length: int) -> None:
    """Lengths 0 to 70 take every path: no stripe, the 4-accumulator stripes (16 bytes and up), whole
    4-byte lanes after them, and 1 to 3 single bytes at the end."""
    rng = np.random.default_rng(1000 + length)
    rows = rng.integers(0, 256, size=(23, length), dtype=np.uint8)
    rows[0] = 0  # all-zero and all-0xFF rows: the lanes' extremes
    rows[1] = 255
    for seed in SEEDS:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no overflow warning from a scalar op
            got = xxh32_rows(rows, seed)
        assert got.dtype == np.uint32 and got.shape == (23,)
        assert got.tolist() == scalar(rows, seed), f"length {length}, seed {seed:#x}"


def test_the_specification_vectors() -> None:
    for data, expected in ((b"", 0x02CC5D05), (b"a", 0x550D7456), (b"abc", 0x32D153FF)):
        rows = np.frombuffer(data, dtype=np.uint8)[None, :]
        assert xxh32_rows(rows).tolist() == [expected]
        assert xxh32(data) == expected


def test_the_seed_is_taken_modulo_two_to_the_32_like_the_scalar_hash() -> None:
    rows = np.random.default_rng(7).integers(0, 256, size=(5, 19), dtype=np.uint8)
    for seed in (-1, 2**32 + 5, 2**40 + 3):
        assert xxh32_rows(rows, seed).tolist() == scalar(rows, seed)
    assert xxh32_rows(rows, -1).tolist() == xxh32_rows(rows, 2**32 - 1).tolist()


def test_no_rows_and_empty_rows() -> None:
    for length in (0, 3, 16, 40):
        out = xxh32_rows(np.zeros((0, length), dtype=np.uint8), 9)
        assert out.dtype == np.uint32 and out.shape == (0,)
    assert xxh32_rows(np.zeros((3, 0), dtype=np.uint8), 5).tolist() == [xxh32(b"", 5)] * 3


@pytest.mark.parametrize("length", [3, 16, 37, 64])
def test_rows_cross_blocks_and_views_hash_as_their_bytes(monkeypatch: pytest.MonkeyPatch, length: int) -> None:
    """Blocks of 4 rows (and of 1 row, when a row holds more than the block's bytes), row slices, a
    column slice (not contiguous) and a Fortran-ordered array hash as the rows' bytes do."""
    rng = np.random.default_rng(500 + length)
    wide = rng.integers(0, 256, size=(41, length + 5), dtype=np.uint8)
    rows = wide[:, 2 : 2 + length]
    expected = scalar(np.ascontiguousarray(rows), 3)
    assert xxh32_rows(rows, 3).tolist() == expected
    assert xxh32_rows(np.asfortranarray(rows), 3).tolist() == expected
    assert xxh32_rows(rows[::-2], 3).tolist() == expected[::-2]
    monkeypatch.setattr(xxh32_module, "_BLOCK_ROWS", 4)
    assert xxh32_rows(rows, 3).tolist() == expected
    monkeypatch.setattr(xxh32_module, "_BLOCK_BYTES", length - 1)
    assert xxh32_rows(rows, 3).tolist() == expected


def test_a_million_rows_of_64_bytes_in_bounded_blocks() -> None:
    """The size the heavy hitters meet; spot-checked against the scalar hash at rows spread over the blocks."""
    rows = np.random.default_rng(64).integers(0, 256, size=(10**6, 64), dtype=np.uint8)
    out = xxh32_rows(rows, 11)
    assert out.shape == (10**6,) and out.dtype == np.uint32
    picks = np.random.default_rng(65).choice(10**6, size=200, replace=False)
    assert out[picks].tolist() == scalar(rows[picks], 11)


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        (np.zeros(4, dtype=np.uint8), "2-D uint8 array .* got 1 dimension"),
        (np.zeros((2, 2, 2), dtype=np.uint8), "2-D uint8 array .* got 3 dimension"),
        (np.uint8(7), "2-D uint8 array .* got 0 dimension"),
        (np.zeros((2, 4), dtype=np.int64), "uint8 array .* got dtype int64"),
        (np.zeros((2, 4), dtype=np.int8), "uint8 array .* got dtype int8"),
        ([[1, 2], [3, 4]], "uint8 array .* got dtype int64"),
    ],
)
def test_refuses_what_is_not_a_2d_uint8_array(rows: object, message: str) -> None:
    with pytest.raises(ParameterError, match=message):
        xxh32_rows(rows)  # type: ignore[arg-type]


def test_fingerprints_are_the_scalar_hash_modulo_the_range_byte_for_byte() -> None:
    """PEM's prefixes: each length of 16-byte answer rows (ended by padding or not), sliced as it slices them."""
    rng = np.random.default_rng(2024)
    rows = rng.integers(1, 256, size=(3000, 16), dtype=np.uint8)
    ends = rng.integers(1, 17, size=3000)
    rows[np.arange(16)[None, :] >= ends[:, None]] = 0
    for j in range(16):
        mine = np.flatnonzero(rng.integers(0, 16, size=3000) == j)
        got = fingerprints(rows[mine, : j + 1])
        assert got.dtype == np.int64 and got.shape == (mine.size,)
        assert got.tolist() == [xxh32(row.tobytes()) % FINGERPRINTS for row in rows[mine, : j + 1]]
    assert fingerprints(np.zeros((0, 5), dtype=np.uint8)).shape == (0,)
