"""Free-text answers as they are hashed: Unicode NFC, trimmed, bounded, as UTF-8 bytes.

One rule for every answer given as text: a spec's hashed answers (:mod:`pldp.deploy.labels`,
``docs/wire-format.md`` §1.5) and the heavy-hitter protocols' strings (:mod:`pldp.heavy`).
``clients/js/client-labels.mjs`` (``normalizeText``) is its JS twin.
"""

from __future__ import annotations

import unicodedata
from typing import Any

from pldp.errors import ParameterError

__all__ = ["MAX_TEXT_BYTES", "TRIMMED", "normalize_text"]

#: The most UTF-8 bytes of a text answer, once normalised.
MAX_TEXT_BYTES = 256
#: The white space trimmed from both ends of a text answer: ASCII space, tab, line feed, carriage return.
TRIMMED = " \t\n\r"


def normalize_text(text: Any, limit: int | None = MAX_TEXT_BYTES) -> str:
    """A text answer as it is hashed: Unicode NFC, then the ASCII white space :data:`TRIMMED`
    stripped from both ends; :class:`~pldp.errors.ParameterError` for anything but a string, a
    string with a lone surrogate (no UTF-8), an empty result or one over ``limit`` UTF-8 bytes
    (:data:`MAX_TEXT_BYTES`; ``None``: no bound, for a caller that cuts the bytes itself). The
    messages never repeat the text."""
    if not isinstance(text, str):
        raise ParameterError(f"this spec's answers are text (a string), got a {type(text).__name__}")
    out = unicodedata.normalize("NFC", text).strip(TRIMMED)
    try:
        size = len(out.encode("utf-8"))
    except UnicodeEncodeError:
        raise ParameterError("the answer's text holds a lone surrogate: it has no UTF-8 form") from None
    if not out:
        raise ParameterError("the answer's text is empty (after trimming white space)")
    if limit is not None and size > limit:
        raise ParameterError(f"the answer's text is {size} UTF-8 bytes, over the {limit} allowed")
    return out
