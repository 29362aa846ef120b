"""The JSON Canonicalization Scheme (JCS, RFC 8785): one text per JSON value, in every language.

A spec's id is the hash of its JCS text (``docs/wire-format.md`` §1.1), so that a client in any
language can recompute it: object members sorted by key (UTF-16 code units), no white space,
strings with the minimal escapes of ``JSON.stringify``, and numbers as ECMAScript's
``Number.prototype.toString`` writes them (``1.0`` is ``1``, ``1e-7`` is ``1e-7``, ``1e21`` is
``1e+21``).
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

__all__ = ["jcs", "js_number"]


def js_number(x: float | int) -> str:
    """A number as ECMAScript's ``Number::toString`` writes it (shortest round-trip digits).

    Examples
    --------
    >>> [js_number(v) for v in (1.0, 0.1, 1e-7, 1.5e16, 1e21, -0.0, 123456789, 2.5e-6)]
    ['1', '0.1', '1e-7', '15000000000000000', '1e+21', '0', '123456789', '0.0000025']
    """
    if isinstance(x, bool):
        raise TypeError("booleans are not numbers here")
    if isinstance(x, int):
        if abs(x) >= 2**53:
            raise ValueError(f"integer {x} is beyond 2**53: JavaScript cannot hold it exactly")
        return str(x)
    if not math.isfinite(x):
        raise ValueError(f"{x!r} has no JSON form")
    if x == 0:
        return "0"
    sign = "-" if x < 0 else ""
    _, digits_t, exp = Decimal(repr(abs(x))).as_tuple()
    digits = "".join(map(str, digits_t)).rstrip("0")
    assert isinstance(exp, int)
    exp += len(digits_t) - len(digits)  # value = digits * 10**exp
    k = len(digits)
    n = exp + k  # value = 0.digits * 10**n
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    mant = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{sign}{mant}e{'+' if e >= 0 else '-'}{abs(e)}"


def jcs(value: Any) -> str:
    """The JCS text of a JSON value (dicts, lists, strings, numbers, booleans, None).

    Examples
    --------
    >>> jcs({"b": [1.0, 0.5], "a": "é"})
    '{"a":"é","b":[1,0.5]}'
    """
    if isinstance(value, dict):
        keys = sorted(value, key=lambda k: k.encode("utf-16-be"))
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(value[k]) for k in keys) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ",".join(jcs(v) for v in value) + "]"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return js_number(value)
    raise TypeError(f"no JSON form for {type(value).__name__}")
