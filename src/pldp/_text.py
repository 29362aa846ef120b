"""Plain-text tables for people: the command line's summaries and :meth:`pldp.audit.AuditResult.table`."""

from __future__ import annotations

import textwrap

__all__ = ["text_table"]


def _cell_lines(text: str, width: int | None) -> list[str]:
    """A table cell as lines: one per line of ``text``, each wrapped at word boundaries to ``width``
    (a word longer than that keeps its own line whole; no number or word is ever cut)."""
    lines = []
    for line in text.split("\n"):
        if width is None or len(line) <= width:
            lines.append(line)
        else:
            lines += textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [""]
    return lines


def text_table(rows: list[list[str]], header: list[str], wrap: dict[int, int] | None = None) -> str:
    """A plain-text table; ``wrap`` maps a column index to the width its cells are wrapped at,
    so that a long cell spans several lines of the table (as does a cell with line breaks)."""
    widths_at = wrap or {}
    cells = [[_cell_lines(str(c), widths_at.get(j)) for j, c in enumerate(row)] for row in rows]
    widths = [max([len(h), *(len(line) for row in cells for line in row[j])]) for j, h in enumerate(header)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [fmt.format(*header).rstrip(), fmt.format(*("-" * w for w in widths))]
    for row in cells:
        for i in range(max(len(c) for c in row)):
            lines.append(fmt.format(*(c[i] if i < len(c) else "" for c in row)).rstrip())
    return "\n".join(lines)
