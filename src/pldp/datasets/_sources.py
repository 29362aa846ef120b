"""The source files of the real datasets: reading their bytes and parsing their formats.

Bytes come from a bundled ``.gz`` file or from a user file, plain or gzip, bzip2 or xz
(detected from its first bytes). Formats: FIMI ``.dat`` (one user per non-blank line of
whitespace-separated integers), the bundled ``user_id,item_id`` CSV, and the Rent the Runway
sources (JSON lines, parquet, or a CSV with ``user_id`` and ``item_id`` columns).
"""

from __future__ import annotations

import bz2
import gzip
import importlib.resources
import io
import json
import lzma
import os
from pathlib import Path

import numpy as np

from pldp.datasets._records import _build_itemsets, _Parsed
from pldp.errors import ParameterError


def _bundled(relpath: str) -> bytes:
    """The uncompressed content of a bundled ``.gz`` file."""
    resource = importlib.resources.files("pldp.datasets").joinpath("data", *relpath.split("/"))
    return gzip.decompress(resource.read_bytes())


def _decompress(raw: bytes) -> bytes:
    if raw[:2] == b"\x1f\x8b":
        return gzip.decompress(raw)
    if raw[:3] == b"BZh":
        return bz2.decompress(raw)
    if raw[:6] == b"\xfd7zXZ\x00":
        return lzma.decompress(raw)
    return raw


def _read_user_file(path: str | Path) -> bytes:
    p = Path(os.fspath(path)).expanduser()
    if not p.is_file():
        raise ParameterError(f"no such file: {str(p)!r}")
    return _decompress(p.read_bytes())


def _file_key(path: str | Path) -> tuple[str, int, int]:
    """Cache key of a user file: its resolved path, size and modification time."""
    p = Path(os.fspath(path)).expanduser().resolve()
    if not p.is_file():
        raise ParameterError(f"no such file: {str(p)!r}")
    st = p.stat()
    return str(p), st.st_size, st.st_mtime_ns


_SPACE = np.zeros(256, dtype=bool)
_SPACE[list(b" \t\r\n\v\f")] = True


def _parse_ints(data: bytes, separators: bytes = b"") -> tuple[np.ndarray, np.ndarray]:
    """Vectorised parser of non-negative decimal integers separated by whitespace.

    Returns the values (``int64``) and the 0-based line of each value. Any byte other than a
    digit, whitespace or one of ``separators`` raises :class:`ParameterError`.
    """
    buf = np.frombuffer(data, dtype=np.uint8)
    digit = (buf >= 48) & (buf <= 57)
    allowed = _SPACE.copy()
    allowed[list(separators)] = True
    bad = ~(digit | allowed[buf])
    if bad.any():
        pos = int(np.argmax(bad))
        line = int(np.count_nonzero(buf[:pos] == 10)) + 1
        raise ParameterError(
            f"expected non-negative integers separated by whitespace; found byte {bytes([buf[pos]])!r} on line {line}"
        )
    edges = np.diff(digit.view(np.int8), prepend=np.int8(0), append=np.int8(0))
    starts = np.flatnonzero(edges == 1)
    lengths = np.flatnonzero(edges == -1) - starts
    if lengths.size and lengths.max() > 18:
        raise ParameterError("an integer in the file has more than 18 digits")
    values = np.zeros(starts.size, dtype=np.int64)
    longest = int(lengths.max()) if lengths.size else 0
    for k in range(longest):  # one pass per digit position, over all tokens at once
        m = lengths > k
        values[m] = values[m] * 10 + (buf[starts[m] + k] - 48)
    lines = np.searchsorted(np.flatnonzero(buf == 10), starts)
    return values, lines


def _parse_dat(data: bytes) -> _Parsed:
    """FIMI ``.dat``: one user per non-blank line, items as whitespace-separated integers."""
    values, lines = _parse_ints(data)
    if values.size == 0:
        raise ParameterError("the file holds no items")
    users = np.zeros(values.size, dtype=np.int64)
    np.cumsum(lines[1:] != lines[:-1], out=users[1:])  # blank lines give no user
    return _build_itemsets(users, values, int(users[-1]) + 1)


def _parse_user_item_csv(data: bytes) -> tuple[np.ndarray, np.ndarray]:
    """The bundled ``user_id,item_id`` CSV (header, then two integers per line)."""
    header, _, body = data.partition(b"\n")
    if header.strip() != b"user_id,item_id":
        raise ParameterError(f"expected the header 'user_id,item_id', got {header[:80]!r}")
    values, lines = _parse_ints(body, separators=b",")
    if values.size % 2 or np.any(lines[0::2] != lines[1::2]):
        raise ParameterError("expected two integers per line")
    return values[0::2], values[1::2]


def _read_clothing_file(path: str | Path) -> tuple[np.ndarray, np.ndarray]:
    """User and item ids of a Rent the Runway file: raw JSON lines, parquet or CSV."""
    name = Path(os.fspath(path)).name.lower()
    if ".parquet" in name:
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is an optional dependency
            raise ImportError("reading parquet needs pandas and pyarrow (pip install pldp[experiments])") from exc
        df = pd.read_parquet(Path(os.fspath(path)).expanduser(), columns=["user_id", "item_id"])
        return df["user_id"].to_numpy(np.int64), df["item_id"].to_numpy(np.int64)
    data = _read_user_file(path)
    first = data.lstrip()[:1]
    if first == b"{":  # renttherunway_final_data.json: one JSON record per line
        users, items = [], []
        for lineno, line in enumerate(data.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
                users.append(int(rec["user_id"]))
                items.append(int(rec["item_id"]))
            except (ValueError, KeyError, TypeError) as exc:
                raise ParameterError(f"line {lineno}: not a record with integer user_id and item_id ({exc})") from None
        return np.asarray(users, dtype=np.int64), np.asarray(items, dtype=np.int64)
    header = data.partition(b"\n")[0].decode("utf-8", "replace").strip().split(",")
    cols = [c.strip().strip('"') for c in header]
    if "user_id" not in cols or "item_id" not in cols:
        raise ParameterError(f"a CSV needs columns user_id and item_id, got {cols}")
    if cols == ["user_id", "item_id"]:
        return _parse_user_item_csv(data)
    table = np.loadtxt(
        io.BytesIO(data),
        delimiter=",",
        skiprows=1,
        usecols=(cols.index("user_id"), cols.index("item_id")),
        dtype=np.int64,
        ndmin=2,
    )
    return table[:, 0].copy(), table[:, 1].copy()
