"""The claims :func:`~pldp.deploy.verify` checks, in words: the spec's questions and answer labels
instead of item indices, as the dashboard's privacy table says them.

A row of :func:`~pldp.deploy.verify` names the part of the sampler and what it protects as the
sampler sees them (``root``, ``output 0``, ``item 1 (+2) vs item 0``); :func:`claim_words` says
the same with the spec's words (``every report``, ``a report of “flu”``, ``“a”, “b” and “c”
against “d”``). It is ``claimWords`` of the dashboard's ``protection.mjs``, line for line;
``tests/test_service_pages.py`` checks that both say the same for every mechanism and protocol.
A row it cannot read keeps its own words. :func:`claims_table` is the table ``pldp spec verify``
prints.

Examples
--------
>>> import json, pldp
>>> from pldp.deploy import Spec, verify
>>> spec = Spec.from_mechanism(pldp.IPRR(pldp.ItemBudgets.from_array([0.5, 1.0, None])),
...                            question="Diagnosis?", labels=["flu", "covid", "none"])
>>> [claim_words(json.loads(spec.to_json()), row) for row in verify(spec).rows]
[('every report', 'a report of “flu”'), ('every report', 'a report of “covid”')]
"""

from __future__ import annotations

import math
import re
from typing import Any

from pldp.channel.claims import Verification
from pldp.channel.node import EVERY_PAIR, Row
from pldp.deploy.labels import HashedAnswers, answer_labels

__all__ = ["claim_words", "claims_table"]

_PART = re.compile(
    r"^(?:root|attribute (\d+))(: sampled item)?(?: level (\d+) \(eps=[^)]*\))?( level report| the level itself)?$"
)
_OUTPUT = re.compile(r"^output (\d+)(?: \(\+\d+\))?$")
_PAIR = re.compile(r"^item (\d+)(?: \(\+\d+\))? vs item (\d+)(?: \(\+\d+\))?$")
#: A heavy node's claims (``root.<part>`` per part, ``root`` the whole report): where, what.
_HEAVY_WORDS = {
    "root.prefix": ("the report of a prefix", "any two answers' prefixes"),
    "root.word": ("the report of the whole answer", "any two answers"),
    "root.fragment": ("the report of a fragment", "any two answers' fragments"),
    "root": ("every report", "any two answers"),
}


def _budget(value: Any) -> float:
    return math.inf if value == "inf" else float(value)


def _eps(eps: float) -> str:
    """A budget for people, as the pages write it: three significant digits, ``∞`` for none."""
    return "∞" if eps == math.inf else f"{eps:.3g}"


def _list_words(names: list[str], most: int = 6) -> str:
    """``“a”, “b” and “c”``; beyond ``most`` names, the first ``most - 1`` and ``N more``."""
    shown = [*names[: most - 1], f"{len(names) - most + 1} more"] if len(names) > most else names
    if len(shown) <= 1:
        return "".join(shown)
    return ", ".join(shown[:-1]) + " and " + shown[-1]


def _group_of(node: dict[str, Any], item: int) -> list[int]:
    """The items of a direct or unary node grouped as :func:`verify` groups them (equal parameters)."""
    fields = ("weights", "epsilons") if node["kind"] == "direct" else ("a", "b", "epsilons")

    def key(y: int) -> tuple[Any, ...]:
        return tuple(node[f][y] for f in fields)

    mine = key(item)
    return [y for y in range(node["d"]) if key(y) == mine]


def claim_words(spec: dict[str, Any], row: Row) -> tuple[str, str]:
    """Where a claim of ``spec`` sits and what it protects, with the spec's questions and labels.

    Parameters
    ----------
    spec : dict
        The spec's JSON, parsed (``json.loads(spec.to_json())``), already verified.
    row : Row
        A row of :func:`~pldp.deploy.verify` of that spec.

    Returns
    -------
    (str, str)
        Where (``every report``, ``“question”, level 2 (ε = 1)``, ...) and what is protected
        (``a report of “flu”``, ``any two answers``, ...); the row's own ``part`` and ``subject``
        where it names something else (a memoized chain's parts, say).
    """
    if isinstance(spec["labels"], dict) and "text" in spec["labels"]:
        # free text: no answer is listed; each part and the whole report protect every pair alike
        return _HEAVY_WORDS.get(row.part, (row.part, row.subject))
    m = _PART.match(row.part)
    if not m:
        return row.part, row.subject
    attr, sampled, level, tail = m.groups()
    root = spec["sampler"]["root"]
    node = root if attr is None else root["parts"][int(attr)]
    labels = answer_labels(spec["labels"] if attr is None else spec["labels"][int(attr)])
    question = spec["question"] if attr is None else spec["question"][int(attr)]
    where = [] if attr is None else [f"“{question}”"]

    def level_name(t: int) -> str:
        return f"level {t + 1} (ε = {_eps(_budget(node['levels'][t]))})"

    if tail == " the level itself":
        return ", ".join([*where, "the level"]), "which level was chosen, whatever the answer"
    if tail == " level report":
        out = _OUTPUT.match(row.subject)
        what = f"a report of {level_name(int(out[1]))}" if out else row.subject
        return ", ".join([*where, "the reported level"]), what
    d = node["d"]
    if sampled:
        where.append("one ticked answer")
        node = node["inner"]
    if level is not None:
        where.append(level_name(int(level)))
        node = node["items"][int(level)]

    def name(y: int) -> str:
        if y < d:  # a hashed form's answers are its buckets: named by number, not as a quoted answer
            return f"bucket {labels[y]}" if isinstance(labels, HashedAnswers) else f"“{labels[y]}”"
        return f"filler {y - d + 1}" if sampled else f"extra item {y - d + 1}"

    def names(y: int) -> str:
        return _list_words([name(z) for z in _group_of(node, y)], 4)

    out = _OUTPUT.match(row.subject)
    if out:
        every = len(_group_of(node, int(out[1]))) == node["d"]
        what = "a report of any answer" if every else f"a report of {names(int(out[1]))}"
        return ", ".join(where) or "every report", what
    pair = _PAIR.match(row.subject)
    if pair:
        i, j = int(pair[1]), int(pair[2])
        group = _group_of(node, i)
        if j in group:
            what = "any two answers" if len(group) == node["d"] else f"any two of {names(i)}"
        else:
            what = f"{names(i)} against {names(j)}"
        return ", ".join(where) or "every report", what
    if row.subject == EVERY_PAIR:  # a node that protects every pair of answers alike
        return ", ".join(where) or "every report", "any two answers"
    return ", ".join(where) or row.part, row.subject


def claims_table(spec: dict[str, Any], result: Verification, max_rows: int = 40) -> str:
    """The rows of a verification as a text table in the spec's words (:func:`claim_words`).

    Parameters
    ----------
    spec : dict
        The spec's JSON, parsed.
    result : Verification
        Its :func:`~pldp.deploy.verify`.
    max_rows : int
        The rows shown at most.

    Returns
    -------
    str
        A header, the rows (failures first, then the tightest, as ``Verification.table`` orders
        them), the verdict with the whole report's epsilon, and the verification's notes.
    """
    return result.table(max_rows, words=lambda row: claim_words(spec, row))
