"""Files a client keeps on the user's device: private (mode 0600), written atomically, locked.

The memo store (:mod:`pldp.deploy.memostore`) and the privacy ledger (:mod:`pldp.ledger`) are
small JSON files that must never be half written (a torn memo would redraw a permanent response
and spend its budget twice; a torn ledger would forget what was spent) nor read by other users.

* :func:`write_private` writes a temporary file in the same folder (``mkstemp``: mode 0600),
  ``fsync``\\ s it, renames it over the file (``os.replace``: atomic on POSIX and Windows) and,
  on POSIX, ``fsync``\\ s the folder so that the rename itself is durable.
* :func:`device_file_path` is where such a file lives by default: in the user's data directory.
* :func:`file_lock` holds an exclusive ``flock`` on ``PATH.lock`` while a caller reads the file
  and writes it again, so that two processes of one device do not interleave (POSIX; elsewhere
  no lock is taken). The JS client takes the same lock in Node (``withFileLock`` in
  ``clients/js/pldp-client.mjs`` runs util-linux's ``flock`` on the lock file it opened), so
  Python and Node processes exclude each other too.
"""

from __future__ import annotations

import os
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

__all__ = ["device_file_path", "file_lock", "write_private"]


def device_file_path(name: str, env: str) -> Path:
    """Where a device keeps its file ``name`` by default: ``$ENV`` if set, else ``pldp/NAME`` in the
    user's data directory (``$XDG_DATA_HOME`` or ``~/.local/share``; ``~/Library/Application
    Support`` on macOS; ``%APPDATA%`` on Windows)."""
    if os.environ.get(env):
        return Path(os.environ[env])
    if sys.platform == "win32":
        base = Path(os.environ.get("APPDATA") or Path.home() / "AppData" / "Roaming")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "pldp" / name


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` by a file holding ``text`` (UTF-8), atomically, durably, with mode 0600.

    Raises ``OSError`` if any step fails; the old file is then left whole and no temporary file stays.
    """
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if os.name == "posix":  # the rename is on disk too
        folder = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``PATH.lock`` (created 0600, its folder 0700 if missing) for the block.

    Raises ``OSError`` if the folder or the lock file cannot be made or opened. Elsewhere than on
    POSIX the block runs without a lock.
    """
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    if os.name != "posix":
        yield
        return
    import fcntl

    lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)  # releases the lock
