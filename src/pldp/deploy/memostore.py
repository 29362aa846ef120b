"""The device's memo store (``pldp.memo/1``): one permanent randomized response per (memo key, value).

A memoized spec (``docs/wire-format.md`` §2, the memo node) bounds any number of reports of one
value by :math:`\\varepsilon_\\infty` only if the device draws that value's permanent randomized
response (PRR) once and keeps it. :class:`MemoFile` keeps the PRRs in a JSON file on the device (by
default :func:`default_store_path`, in the user's data directory), readable by its owner only
(mode ``0600``), rewritten atomically (a temporary file in the same folder, ``fsync``, then
``os.replace``) under an exclusive lock, so that a crash leaves the old memo or the new one, never
half of one. :class:`MemoryStore` keeps them in memory, for tests and simulations (they die with
the process: a later process would draw new PRRs and void :math:`\\varepsilon_\\infty`).

The file (the JS client's Node store writes the same format)::

    {"format": "pldp.memo/1",
     "memos": {"<memo key>": {"permanent": "<32 hex>", "kind": "direct", "d": 4,
                              "responses": {"2": 3, "0": 1}}}}

``permanent`` is :func:`permanent_fingerprint` of the spec's labels and permanent node: a spec with
the same memo key but another PRR (or other labels) is refused, since its claims would not cover
the PRRs held. A response is the PRR's output: an item (direct) or the packed bits as base64 (unary,
packed as a report's payload). A store that cannot be read, is not this format, holds a response
outside its domain, or (POSIX) is readable or writable by other users makes the client refuse to
report, saying why (:class:`MemoStoreError`): silently starting again would redraw PRRs.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import numpy as np

from pldp.channel import MemoInput, MemoNode
from pldp.deploy.jcs import jcs
from pldp.deploy.labels import labels_json
from pldp.devicefiles import device_file_path, file_lock, write_private
from pldp.errors import PLDPError

__all__ = [
    "MEMO_FORMAT",
    "DeviceMemo",
    "MemoFile",
    "MemoStore",
    "MemoStoreError",
    "MemoryStore",
    "default_store_path",
    "permanent_fingerprint",
]

#: The version tag of the memo store's format.
MEMO_FORMAT = "pldp.memo/1"
_HEX32 = re.compile(r"[0-9a-f]{32}")
_INDEX = re.compile(r"0|[1-9][0-9]*")


class MemoStoreError(PLDPError, RuntimeError):
    """A memo store that cannot be read, written or trusted: the client refuses to report."""


def default_store_path() -> Path:
    """Where a device keeps its memo by default: ``$PLDP_MEMO_STORE`` if set, else ``pldp/memo.json``
    in the user's data directory (``$XDG_DATA_HOME`` or ``~/.local/share``; ``~/Library/Application
    Support`` on macOS; ``%APPDATA%`` on Windows)."""
    return device_file_path("memo.json", "PLDP_MEMO_STORE")


def permanent_fingerprint(labels: Sequence[Any], node: MemoNode) -> str:
    """32 hex digits of SHA-256 of the JCS text of ``{"labels", "permanent"}``: which PRRs a memo
    holds (the spec's labels as written: a list, or ``{"range": d}``)."""
    text = jcs({"labels": labels_json(labels), "permanent": node.permanent.to_json()})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


def _bad(where: str, why: str) -> MemoStoreError:
    return MemoStoreError(
        f"the memo store {where} {why}; refusing to report (drawing new permanent responses would void "
        "the eps_perm claim). Repair or restore it, or move it away to start an empty memo."
    )


def check_document(doc: Any, where: str) -> dict[str, Any]:
    """The ``memos`` of a parsed store, after checking every member (:class:`MemoStoreError` if not)."""
    if not isinstance(doc, dict) or set(doc) != {"format", "memos"} or doc["format"] != MEMO_FORMAT:
        raise _bad(where, f"is not a {MEMO_FORMAT} object with exactly 'format' and 'memos'")
    memos = doc["memos"]
    if not isinstance(memos, dict):
        raise _bad(where, "has memos that are not an object")
    for key, entry in memos.items():
        if not isinstance(entry, dict) or set(entry) != {"permanent", "kind", "d", "responses"}:
            raise _bad(where, f"has a memo {key!r} without exactly 'permanent', 'kind', 'd' and 'responses'")
        d, kind, responses = entry["d"], entry["kind"], entry["responses"]
        if not (isinstance(entry["permanent"], str) and _HEX32.fullmatch(entry["permanent"])):
            raise _bad(where, f"has a memo {key!r} whose permanent fingerprint is not 32 hex digits")
        column = MemoNode.permanent_column(kind, d) if isinstance(d, int) and not isinstance(d, bool) else None
        if column is None or d < 2:
            raise _bad(where, f"has a memo {key!r} with a bad kind or size")
        if not isinstance(responses, dict):
            raise _bad(where, f"has a memo {key!r} whose responses are not an object")
        for value, z in responses.items():
            if not _INDEX.fullmatch(value) or int(value) >= d:
                raise _bad(where, f"has a memo {key!r} with a value {value!r} outside 0..{d - 1}")
            if not column.is_canonical_json(z):
                raise _bad(where, f"has a memo {key!r} whose permanent response of value {value} is outside the domain")
    return memos


class MemoStore:
    """Where a device keeps its permanent responses: :meth:`session` locks, reads and checks the
    memos, and writes them back (before the session ends) when a report added one."""

    @contextmanager
    def session(self) -> Iterator[dict[str, Any]]:
        """The memos (``{key: entry}``, as in the file), locked for this session."""
        raise NotImplementedError
        yield {}  # pragma: no cover


class MemoryStore(MemoStore):
    """Permanent responses kept in memory (for tests and simulations): they die with the process."""

    def __init__(self) -> None:
        self._memos: dict[str, Any] = {}

    @contextmanager
    def session(self) -> Iterator[dict[str, Any]]:
        memos = json.loads(json.dumps(self._memos))
        yield memos
        self._memos = memos


class MemoFile(MemoStore):
    """Permanent responses in a JSON file (module docstring): mode ``0600``, replaced atomically,
    locked (``flock`` on ``PATH.lock``, POSIX) while a batch reads and extends it."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(default_store_path() if path is None else path)

    def __repr__(self) -> str:
        return f"MemoFile({str(self.path)!r})"

    def _read(self) -> dict[str, Any]:
        where = str(self.path)
        try:
            st = self.path.stat()
        except FileNotFoundError:
            return {}  # a missing store starts empty
        except OSError as exc:
            raise _bad(where, f"cannot be read ({exc.strerror})") from None
        if os.name == "posix" and st.st_mode & 0o077:
            raise _bad(where, f"is open to other users (mode {st.st_mode & 0o777:04o}); chmod 600 it")
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise _bad(where, f"cannot be read ({exc})") from None
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _bad(where, f"is not valid JSON ({exc})") from None
        return check_document(doc, where)

    def _write(self, memos: dict[str, Any]) -> None:
        # the bytes the JS client's Node store writes
        write_private(self.path, jcs({"format": MEMO_FORMAT, "memos": memos}))

    @contextmanager
    def session(self) -> Iterator[dict[str, Any]]:
        held = ExitStack()
        try:
            held.enter_context(file_lock(self.path))
        except OSError as exc:
            raise _bad(str(self.path), f"cannot be opened ({exc.strerror})") from None
        with held:  # released at the end
            memos = self._read()
            before = json.dumps(memos, sort_keys=True)
            yield memos
            if json.dumps(memos, sort_keys=True) != before:
                try:
                    self._write(memos)
                except OSError as exc:
                    raise _bad(str(self.path), f"cannot be written ({exc.strerror})") from None


class DeviceMemo:
    """The memo of one memoized spec on a device: its entry in a store (key and fingerprint checked),
    turned into :class:`~pldp.channel.MemoInput` for a batch and extended with the batch's new PRRs."""

    def __init__(self, store: MemoStore, key: str, fingerprint: str, node: MemoNode) -> None:
        self.store, self.key, self.fingerprint, self.node = store, key, fingerprint, node
        self.kind = node.permanent.kind

    def _entry(self, memos: dict[str, Any]) -> dict[str, Any]:
        entry = memos.get(self.key)
        if entry is None:
            entry = {"permanent": self.fingerprint, "kind": self.kind, "d": self.node.d, "responses": {}}
            memos[self.key] = entry
        elif (entry["permanent"], entry["kind"], entry["d"]) != (self.fingerprint, self.kind, self.node.d):
            raise MemoStoreError(
                f"the memo key {self.key!r} holds the permanent responses of another permanent randomized "
                f"response or other labels (fingerprint {entry['permanent']}, this spec's is {self.fingerprint}); "
                "refusing to report: reusing them would void both claims. Give this spec another memo key."
            )
        return entry

    def input(self, memos: dict[str, Any], items: np.ndarray) -> MemoInput:
        """The program's input: the held PRRs of ``items``; the first report of each value the memo
        lacks draws one, later reports of that value in the batch copy it (vectorised over reports)."""
        responses = self._entry(memos)["responses"]
        uniq, first, inv = np.unique(items, return_index=True, return_inverse=True)
        held = np.array([str(v) in responses for v in uniq.tolist()], dtype=bool)
        permanent = self.node.empty_permanent(items.size)
        if held.any():
            zs = [responses[str(v)] for v in uniq[held].tolist()]
            per_value = self.node.empty_permanent(uniq.size)
            per_value[held] = self.node.read_permanent_json(zs)
            permanent[:] = per_value[inv]
        source = np.where(held[inv], -1, first[inv]).astype(np.int64)
        return MemoInput(items.astype(np.int64), permanent, source)

    def keep(self, memos: dict[str, Any], inp: MemoInput) -> np.ndarray:
        """Put the batch's new PRRs into the memos; returns the values they are of (sorted)."""
        rows = np.flatnonzero(inp.source == np.arange(inp.items.size))
        responses = self._entry(memos)["responses"]
        new = inp.items[rows]
        zs = self.node.permanent_json(inp.permanent[rows])
        responses.update(zip(map(str, new.tolist()), zs, strict=True))
        return np.sort(new)
