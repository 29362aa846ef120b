"""The table of estimation methods: each method's name, what it does, what it guarantees, and its
words on the dashboard.

Every oracle's ``estimate(tally, method)`` takes a method by name; :attr:`FrequencyOracle.methods
<pldp.oracle.FrequencyOracle.methods>` lists those it offers, each a name of
:data:`ESTIMATION_METHODS`. The same table gives the refusal of an unknown method
(:func:`check_method`), the command line's ``--method`` help (:func:`method_help`), the dashboard's
words (:func:`dashboard_module`, written to ``pldp/service/static/method-table.mjs``) and the
table of the docs (:func:`markdown_table`).

This module imports nothing of pldp but its errors (no oracle, no estimator, no scipy), so the
command line and the collector read it cheaply.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pldp.errors import EstimationError

__all__ = [
    "ESTIMATION_METHODS",
    "STANDARD_METHODS",
    "EstimationMethod",
    "check_method",
    "dashboard_module",
    "markdown_table",
    "method_help",
]

_NBSP = "\u00a0"


@dataclass(frozen=True)
class EstimationMethod:
    """One estimation method.

    Attributes
    ----------
    name : str
        The name ``estimate`` takes.
    summary : str
        What it does, in one line (docs and ``--help``).
    guarantee : str
        What it guarantees or bounds, in a few words.
    label : str
        The dashboard's method menu entry.
    short : str
        The dashboard's summary line, a few words.
    words : str
        What it does in plain words, under the dashboard's method menu.
    standard : bool
        Every oracle offers it (:data:`STANDARD_METHODS`).
    on_simplex : bool
        A promise: its estimates always lie on the probability simplex (non-negative, summing to 1)
        and say so (:attr:`Estimate.on_simplex <pldp.estimation.result.Estimate.on_simplex>`).
        ``False`` promises nothing: such a method's estimate may still land on the simplex and say
        so (a robust or screened estimate of some protocols);
        PaddingSampling's lie on the simplex of the padded items, before the real items' shares are
        rescaled.
    """

    name: str
    summary: str
    guarantee: str
    label: str
    short: str
    words: str
    standard: bool = False
    on_simplex: bool = False


_ROBUST_WORDS = (
    "Robust to fake users claiming levels: the reports of each privacy level (in PLDP-FEBSF, of each reported level "
    "and number of ones) give their own shares, and these are combined so that every report counts the same whatever "
    "level it claims: fake users gain nothing by choosing or spreading their claims, and move a share about as much "
    "as fake users move a survey where everyone has the average budget (at most 10\u00a0% more, measured). Without "
    "fake users the shares are a little noisier than the unbiased ones (PLDP-FEBSF with unary reports: less noisy)."
)

#: Every estimation method by name: the standard ones first, then the extras in the dashboard's order.
ESTIMATION_METHODS: dict[str, EstimationMethod] = {
    m.name: m
    for m in (
        EstimationMethod(
            "unbiased",
            "the channel inverted: unbiased (PLDP-FEBSF: approximately); a share may fall below 0",
            "unbiased",
            "Unbiased (can fall below 0\u00a0%)",
            "unbiased",
            "Unbiased: averaged over many surveys these shares are exactly right, but the noise that protects the "
            "respondents can push a share below 0\u00a0% or above 100\u00a0%.",
            standard=True,
        ),
        EstimationMethod(
            "norm_sub",
            "the unbiased estimate projected onto the probability simplex (Norm-Sub, Wang et al. NDSS 2020)",
            "on the simplex",
            "Clipped to 0–100\u00a0% (Norm-Sub)",
            "clipped",
            "Clipped to 0–100\u00a0% (Norm-Sub): the unbiased shares, with every negative one set to 0\u00a0% and the "
            "others lowered by one common amount so that they add up to 100\u00a0%.",
            standard=True,
            on_simplex=True,
        ),
        EstimationMethod(
            "mle",
            "the shares under which the reports are the most likely",
            "maximum likelihood, on the simplex",
            "Most likely (maximum likelihood)",
            "most likely",
            "Most likely (maximum likelihood): the shares, each between 0\u00a0% and 100\u00a0% and adding up to "
            "100\u00a0%, under which the reports received are the most probable.",
            standard=True,
            on_simplex=True,
        ),
        EstimationMethod(
            "robust",
            "the levels' estimates combined so that every report counts alike (PBP, PPDA: their robust estimate)",
            "bounded influence of a share of fake users, whatever levels they claim",
            "Robust to fake users claiming levels",
            "robust to fake levels",
            _ROBUST_WORDS,
        ),
        EstimationMethod(
            "huber",
            "Huber's bounded-influence combination of the levels' estimates (the former robust method)",
            "bounded influence of fake users claiming one level",
            "Huber over the levels (the former robust method)",
            "Huber over the levels",
            "Huber over the levels: the former robust method, kept for comparison. Fake users who all claim one level "
            "cannot take it over, but fake users who spread their claims over the levels of most weight move it more "
            "than the unbiased shares.",
        ),
        EstimationMethod(
            "detect",
            "reports with a number of ones honest devices almost never produce left out, the channel of the rest "
            "inverted",
            "unlikely reports removed",
            "Drop unlikely reports",
            "unlikely reports dropped",
            "Drop unlikely reports: reports with a number of ones that honest devices almost never produce are left "
            "out, and the shares are corrected for the few honest reports left out with them.",
        ),
        EstimationMethod(
            "recover",
            "the fake reports' share that estimates below zero prove subtracted, then projected onto the simplex",
            "fakes' proven share removed, on the simplex",
            "Subtract suspected fake reports",
            "suspected fakes subtracted",
            "Subtract suspected fake reports: the share of fake reports is estimated from the answers they push below "
            "what honest reports allow, and their weight is taken off the shares.",
            on_simplex=True,
        ),
        EstimationMethod(
            "sum",
            "each level's reports inverted on their own and the counts added (the paper's baseline)",
            "unbiased",
            "Levels added (the paper's baseline)",
            "levels added",
            "Levels added: each privacy level's reports counted on their own, and the counts added (the paper's "
            "baseline).",
        ),
        EstimationMethod(
            "paper",
            "the EM as printed in the paper, kept to reproduce its numbers",
            "as printed, on the simplex",
            "As printed in the paper",
            "as printed in the paper",
            "As printed in the paper: kept to reproduce the paper's numbers; other methods estimate better.",
            on_simplex=True,
        ),
        EstimationMethod(
            "discover",
            "a free-text campaign's heavy hitters: the most frequent answers found from the reports, with their shares",
            "shares unbiased given the answers found (TreeHist, SFP); a floor below which an answer may be noise",
            "Discover the most frequent answers",
            "answers discovered",
            "Discovered answers: respondents typed their own answers, and the most frequent ones were found from "
            "the randomized reports alone, each with its estimated share. An answer below the floor may be held by "
            "nobody, a rare answer may be missed, and only the first bytes of a long answer are seen.",
        ),
    )
}

#: The estimation methods every oracle accepts.
STANDARD_METHODS: tuple[str, ...] = tuple(name for name, m in ESTIMATION_METHODS.items() if m.standard)


def check_method(method: str, offered: Sequence[str], owner: str) -> str:
    """``method`` if ``owner`` offers it, else the refusal naming what it offers.

    Parameters
    ----------
    method : str
        The method asked for.
    offered : sequence of str
        The methods ``owner`` offers (names of :data:`ESTIMATION_METHODS`).
    owner : str
        Who is asked (an oracle's class name), for the message.

    Raises
    ------
    EstimationError
        ``method`` is not in ``offered``: ``unknown method 'x' for KRR; choose one of (...)``.

    Examples
    --------
    >>> check_method("nope", STANDARD_METHODS, "KRR")
    Traceback (most recent call last):
    ...
    pldp.errors.EstimationError: unknown method 'nope' for KRR; choose one of ('unbiased', 'norm_sub', 'mle')
    >>> [name for name, m in ESTIMATION_METHODS.items() if m.on_simplex]
    ['norm_sub', 'mle', 'recover', 'paper']
    """
    if method not in offered:
        raise EstimationError(f"unknown method {method!r} for {owner}; choose one of {tuple(offered)}")
    return method


def method_help(default: str = "unbiased") -> str:
    """The command line's ``--method`` help: every method, the standard ones first."""
    every = ", ".join(f"{n} (default)" if n == default else n for n in STANDARD_METHODS)
    extra = ", ".join(n for n in ESTIMATION_METHODS if n not in STANDARD_METHODS)
    return f"estimation method: {every}; where the campaign's oracle offers them, {extra}"


def _js_string(text: str) -> str:
    """``text`` as a JavaScript string literal, the non-breaking spaces written as escapes."""
    return json.dumps(text, ensure_ascii=False).replace(_NBSP, "\\u00a0")


def dashboard_module() -> str:
    """The JavaScript module of the dashboard's words (``pldp/service/static/method-table.mjs``):
    ``METHOD_LABELS``, ``METHOD_SHORT`` and ``METHOD_WORDS``, each method's name to its words."""
    parts = [
        "// Generated from pldp.methods (the table of estimation methods) by",
        "// `python -m pldp.methods`: do not edit; a test checks it against the table.",
    ]
    for const, field, what in (
        ("METHOD_LABELS", "label", "Each method as the method menu names it."),
        ("METHOD_SHORT", "short", "Each method in a few words, for the summary line."),
        ("METHOD_WORDS", "words", "What each method does, in plain words."),
    ):
        parts += ["", f"/** {what} */", f"export const {const} = {{"]
        parts += [f"  {name}: {_js_string(getattr(m, field))}," for name, m in ESTIMATION_METHODS.items()]
        parts.append("};")
    return "\n".join(parts) + "\n"


def markdown_table(support: Mapping[str, Sequence[str]]) -> str:
    """The docs' table of methods: name, what it does, what it guarantees, which oracles offer it.

    Parameters
    ----------
    support : mapping of str to sequence of str
        Each extra method's oracles (class names); the standard methods are offered by every one.
    """
    rows = ["| method | what it does | guarantees | oracles |", "|---|---|---|---|"]
    for name, m in ESTIMATION_METHODS.items():
        who = "every oracle" if m.standard else ", ".join(support.get(name, ())) or "none"
        rows.append(f'| `"{name}"` | {m.summary} | {m.guarantee} | {who} |')
    return "\n".join(rows) + "\n"


if __name__ == "__main__":  # pragma: no cover - the generator of the dashboard's words
    from pathlib import Path

    Path(__file__).with_name("service").joinpath("static", "method-table.mjs").write_text(
        dashboard_module(), encoding="utf-8"
    )
