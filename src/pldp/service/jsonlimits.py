"""JSON read within bounds: nesting depth, digits of a number, and the count of values.

Python's :func:`json.loads` has three costs an anonymous body can drive. A body nested a thousand
deep raises :class:`RecursionError`, and an integer of more than 4,300 digits a
:class:`ValueError`; neither is a :class:`json.JSONDecodeError`, so both used to escape as a 500
with a traceback. And the memory of the objects it builds grows with their *number*, not with the
bytes: 8 MiB of ``[{},{},...]`` are 2.8 million dicts, about 200 MB. :func:`loads` therefore
scans the bytes first, in C (``bytes.count``, ``bytes.translate``, :mod:`re`), and refuses such a
body before :func:`json.loads` builds anything:

* ``max_depth``: arrays and objects nested deeper (a pldp body nests at most 10 deep);
* ``max_digits``: a run of more digits (a pldp body's longest numbers have 17);
* ``max_values``: more arrays, objects and commas together than that (about the number of values;
  :func:`report_values` bounds it for the reports a campaign can take).

The first scan ignores that JSON strings may hold brackets, commas and digits, so it can only
overcount. Only a body it refuses is scanned again with its strings blanked out (a linear regular
expression), so that a spec whose labels hold brackets is not refused for them.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np

from pldp.deploy import Spec

__all__ = ["JSONLimitError", "Scan", "check", "loads", "report_values", "scan"]

#: Nesting deeper than this is refused.
MAX_DEPTH = 64
#: A run of more digits than this is refused (Python's int conversion stops at 4,300).
MAX_DIGITS = 1000

_OPEN, _CLOSE = b"[{", b"]}"
_OTHERS = bytes(b for b in range(256) if b not in _OPEN + _CLOSE)
# A JSON string, possessive so that it never backtracks, and also when it is not closed (to the end
# of the body): one pass over the body whatever it holds.
_STRING = re.compile(rb'"(?:[^"\\]++|\\.)*+(?:"|\\?\Z)', re.DOTALL)


class JSONLimitError(ValueError):
    """A body over a bound of :func:`loads`: ``code`` (``too_deep``, ``number_too_long``,
    ``too_many_values``) and a reason in words."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Scan:
    """What :func:`scan` found: the ``depth``, the longest run of ``digits``, and ``values``
    (arrays, objects and commas)."""

    __slots__ = ("depth", "digits", "values")

    def __init__(self, depth: int, digits: int, values: int) -> None:
        self.depth, self.digits, self.values = depth, digits, values


def _digits(raw: bytes | bytearray, over: int) -> int:
    """The length of the first run of more than ``over`` digits, else ``over`` (a run starts after a non-digit:
    the search is one pass)."""
    found = re.search(rb"(?<![0-9])[0-9]{%d,}" % (over + 1), raw)
    return over if found is None else found.end() - found.start()


def scan(raw: bytes | bytearray, max_depth: int, max_digits: int, max_values: int | None) -> Scan:
    """Measure ``raw`` as far as the bounds need (strings included: see module doc).

    The depth is measured only when the count of values is within ``max_values``, so its arrays
    stay small: one byte per bracket.
    """
    values = raw.count(b",") + raw.count(b"[") + raw.count(b"{")
    if max_values is not None and values > max_values:
        return Scan(0, 0, values)
    brackets = np.frombuffer(raw.translate(None, _OTHERS), dtype=np.uint8)
    depth = 0
    if brackets.size:
        steps = np.where((brackets == _OPEN[0]) | (brackets == _OPEN[1]), 1, -1).astype(np.int32)
        depth = int(np.cumsum(steps).max())
    return Scan(depth, _digits(raw, max_digits), values)


def _within(found: Scan, max_depth: int, max_digits: int, max_values: int | None) -> bool:
    return (
        found.depth <= max_depth and found.digits <= max_digits and (max_values is None or found.values <= max_values)
    )


def check(
    raw: bytes | bytearray,
    max_depth: int = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
    max_values: int | None = None,
) -> None:
    """Refuse ``raw`` if it is over a bound (module doc), without parsing it.

    Raises
    ------
    JSONLimitError
        Over ``max_depth``, ``max_digits`` or ``max_values``.
    """
    found = scan(raw, max_depth, max_digits, max_values)
    if _within(found, max_depth, max_digits, max_values):
        return
    found = scan(_STRING.sub(b'""', raw), max_depth, max_digits, max_values)  # did strings hold what was counted?
    if max_values is not None and found.values > max_values:
        raise JSONLimitError(
            "too_many_values",
            f"the body holds {found.values:,} JSON arrays, objects and commas; at most {max_values:,} here",
        )
    if found.depth > max_depth:
        raise JSONLimitError("too_deep", f"the body nests {found.depth} arrays or objects deep; at most {max_depth}")
    if found.digits > max_digits:
        raise JSONLimitError(
            "number_too_long", f"the body holds a number of {found.digits:,} digits; at most {max_digits}"
        )


def loads(
    raw: bytes | bytearray,
    max_depth: int = MAX_DEPTH,
    max_digits: int = MAX_DIGITS,
    max_values: int | None = None,
) -> Any:
    """:func:`json.loads` of ``raw`` once :func:`check` passes.

    Raises
    ------
    JSONLimitError
        Over ``max_depth``, ``max_digits`` or ``max_values``.
    json.JSONDecodeError, UnicodeDecodeError
        Not JSON (as :func:`json.loads`).
    """
    check(raw, max_depth, max_digits, max_values)
    return json.loads(raw)


def report_values(spec: Spec, max_reports: int) -> int:
    """An upper bound of the arrays, objects and commas of ``max_reports`` reports of ``spec`` in
    any of the accepted forms (a batch, a list of reports, one report).

    A report is an object of at most four members (three commas, one object); each column of its
    payload (:meth:`pldp.channel.node.Node.columns`: an item, a level or a packed row) adds at most
    a value's comma and an enclosing array or object; a list adds a comma per report.
    """
    per_report = 6 + 3 * len(spec.root.columns())
    return 8 + max_reports * per_report
