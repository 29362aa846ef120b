"""The ledger's file (``pldp.ledger/2``, :mod:`pldp.ledger`): read and checked, or refused; written
atomically (a temporary file in the same folder, ``fsync``, ``os.replace``, ``fsync`` of the
folder) under an exclusive lock, readable by its owner only (mode ``0600``), as the memo store is.

A ``pldp.ledger/1`` file (written before the charge stopped depending on the answers) is read by
migrating each family conservatively (:func:`migrate_family`) and written back as
``pldp.ledger/2`` at the next charge."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, cast

from pldp.devicefiles import file_lock, write_private
from pldp.errors import PLDPError
from pldp.privacy.base import repeated

__all__ = ["LEDGER_FORMAT", "LedgerError", "LedgerFile", "is_count", "json_eps", "migrate_family", "read_eps"]

#: The version tag of the ledger's format.
LEDGER_FORMAT = "pldp.ledger/2"
#: The format before it: read (migrated by :func:`migrate_family`), never written.
LEDGER_FORMAT_1 = "pldp.ledger/1"
_FORMATS = (LEDGER_FORMAT, LEDGER_FORMAT_1)
_DAY = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_FAMILY_KEYS_1 = {"epsilon", "reports", "values", "report_epsilon", "day", "day_epsilon", "day_reports", "day_values"}
#: A family's members (besides ``campaigns``): ``epsilon``/``day_epsilon`` are the charged spend (the
#: caps are checked against it), ``values_epsilon``/``day_values_epsilon`` the per-value spend (display).
_FAMILY_KEYS = _FAMILY_KEYS_1 | {"values_epsilon", "day_values_epsilon"}
_EPS_KEYS = ("epsilon", "day_epsilon", "values_epsilon", "day_values_epsilon", "report_epsilon")


class LedgerError(PLDPError, RuntimeError):
    """A ledger that cannot be read, written or trusted: the client refuses to report."""


def _bad(where: str, why: str) -> LedgerError:
    return LedgerError(
        f"the privacy ledger {where} {why}; refusing to report (a fresh ledger would forget what this device "
        "has spent). Repair or restore it, or move it away to start an empty one."
    )


def _eps(value: Any) -> float | None:
    """A stored epsilon (a number >= 0, or null: unbounded) as a float; None if not valid."""
    if value is None:
        return math.inf
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def is_count(value: Any) -> bool:
    """Whether ``value`` is an integer >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _check_family(entry: Any, where: str, name: str, keys: set[str]) -> None:
    if not isinstance(entry, dict) or set(entry) != keys | {"campaigns"}:
        raise _bad(where, f"has a family {name!r} without exactly {sorted(keys | {'campaigns'})}")
    for key in sorted(keys & set(_EPS_KEYS)):
        if _eps(entry[key]) is None:
            raise _bad(where, f"has a family {name!r} whose {key} is not a number >= 0 or null")
    if not all(is_count(entry[k]) for k in ("reports", "values", "day_reports", "day_values")):
        raise _bad(where, f"has a family {name!r} whose counts are not integers >= 0")
    if not isinstance(entry["day"], str) or not _DAY.fullmatch(entry["day"]):
        raise _bad(where, f"has a family {name!r} whose day is not YYYY-MM-DD")
    campaigns = entry["campaigns"]
    if not isinstance(campaigns, dict):
        raise _bad(where, f"has a family {name!r} whose campaigns are not an object")
    for spec_id, c in campaigns.items():
        ok = isinstance(c, dict) and {"reports", "rounds"} <= set(c) <= {"reports", "rounds", "question"}
        rounds: list[Any] = c["rounds"] if ok and isinstance(c["rounds"], list) else []
        ok = ok and is_count(c["reports"]) and isinstance(c.get("question", ""), str) and isinstance(c["rounds"], list)
        if not (ok and all(is_count(r) and r > 0 for r in rounds) and rounds == sorted(set(rounds))):
            raise _bad(where, f"has a campaign {spec_id!r} that is not {{reports, rounds[, question]}}")


def migrate_family(entry: dict[str, Any]) -> dict[str, Any]:
    r"""A checked ``pldp.ledger/1`` family as a ``pldp.ledger/2`` one, conservatively.

    Format 1 charged a memoized family :math:`\bar\varepsilon_\infty` per value new to the memo (its
    ``values`` > 0; a fresh spec never records values) and stored that sum as ``epsilon``. Its
    charged spend becomes ``reports * (epsilon / values)`` (today's ``day_reports * (epsilon /
    values)``): :math:`R\,\bar\varepsilon_\infty`, an upper bound of the new rule's
    :math:`\min(R, d)\,\bar\varepsilon_\infty` that depends on counts only; the old ``epsilon``
    (and ``day_epsilon``) become its per-value spend. A family with ``values == 0`` charged
    :math:`n\,\bar\varepsilon` per batch, which both spends keep.
    """
    e = dict(entry)
    e.update(values_epsilon=e["epsilon"], day_values_epsilon=e["day_epsilon"])
    if e["values"] > 0:
        per_value = read_eps(e["epsilon"]) / e["values"]
        e.update(
            epsilon=json_eps(repeated(e["reports"], per_value)),
            day_epsilon=json_eps(repeated(e["day_reports"], per_value)),
        )
    return e


def _check_document(doc: Any, where: str) -> dict[str, Any]:
    """The families of a ledger document, every member checked (:class:`LedgerError` if not valid);
    a ``pldp.ledger/1`` document's migrated (:func:`migrate_family`)."""
    version = doc.get("format") if isinstance(doc, dict) else None
    if not isinstance(doc, dict) or set(doc) != {"format", "families"} or version not in _FORMATS:
        raise _bad(where, f"is not a {LEDGER_FORMAT} object with exactly 'format' and 'families'")
    if not isinstance(doc["families"], dict):
        raise _bad(where, "has families that are not an object")
    keys = _FAMILY_KEYS if version == LEDGER_FORMAT else _FAMILY_KEYS_1
    for name, entry in doc["families"].items():
        _check_family(entry, where, name, keys)
    families = cast(dict[str, Any], doc["families"])
    if version == LEDGER_FORMAT_1:
        families = {name: migrate_family(entry) for name, entry in families.items()}
    return families


def json_eps(e: float) -> float | None:
    """An epsilon as stored: ``inf`` (unbounded) as ``null``."""
    return None if math.isinf(e) else e


def read_eps(value: Any) -> float:
    """A checked stored epsilon as a float (``null``: ``inf``)."""
    return cast(float, _eps(value))


class LedgerFile:
    """The ledger's families in a file (``path``), or in memory (``path`` None: tests only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, Any] = {}

    def read(self) -> dict[str, Any]:
        if self.path is None:
            return json.loads(json.dumps(self._memory))
        where = str(self.path)
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise _bad(where, f"cannot be read ({exc.strerror})") from None
        if os.name == "posix" and st.st_mode & 0o077:
            raise _bad(where, f"is open to other users (mode {st.st_mode & 0o777:04o}); chmod 600 it")
        try:
            doc = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise _bad(where, f"is not valid JSON ({exc})") from None
        return _check_document(doc, where)

    def write(self, families: dict[str, Any]) -> None:
        if self.path is None:
            self._memory = families
            return
        text = json.dumps({"format": LEDGER_FORMAT, "families": families}, sort_keys=True, separators=(",", ":"))
        write_private(self.path, text)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """An exclusive lock on ``PATH.lock`` (POSIX ``flock``) while a charge reads and rewrites the file."""
        if self.path is None:
            yield
            return
        held = ExitStack()
        try:
            held.enter_context(file_lock(self.path))
        except OSError as exc:
            raise _bad(str(self.path), f"cannot be locked ({exc.strerror})") from None
        with held:
            yield
