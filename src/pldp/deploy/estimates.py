"""A campaign's estimate as JSON, text and a tidy table: one shape wherever it is shown.

The collector serves it (``GET /v1/campaigns/{id}/estimate``), ``pldp campaign estimate`` prints
what the collector served, and ``pldp aggregate`` builds it from a tally of report files. This
module holds that shape without the service's dependencies (FastAPI), so that reading report
files needs no web framework:

``{"campaign": spec id, "n": reports, "method": ..., "level": ..., "methods": [...],
"detection": SCREEN, "attributes": [PART, ...]}``

with ``methods`` every method the campaign's oracle offers (``oracle.methods``: any of them may be
asked for), ``SCREEN`` the detection screen of the reports (:func:`detection_json`: the share of
reports whose number of ones honest devices almost never produce, or why there is no screen), and
one ``PART`` per attribute (one, except for MPLDP): its ``name`` (None for a single attribute),
the spec's ``labels`` and, per label, the frequency, its standard error and the interval, plus the
estimator's diagnostics and the fallback it took, if any (``fallback``, ``fallback_reason``: e.g.
PLDP-FEBSF's AUEM replaced by the ``"robust"`` method when the level reports do not fit it).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from pldp.deploy.spec import Spec
from pldp.errors import EstimationError, ParameterError, TallyError
from pldp.estimation.detect import screen

__all__ = [
    "DETECTION_KEYS",
    "SCREENED_METHODS",
    "TIDY_COLUMNS",
    "answer_label",
    "attributes_json",
    "campaign_estimate",
    "check_method",
    "detection_json",
    "detection_words",
    "discovery_estimate",
    "discovery_json",
    "estimate_json",
    "estimate_text",
    "fallback_words",
    "percent_words",
    "power_words",
    "tidy_estimate",
]

#: The columns of :func:`tidy_estimate`.
TIDY_COLUMNS = ("attribute", "label", "frequency", "std_error", "ci_low", "ci_high")
#: The members of :func:`detection_json` besides ``available`` and ``reason`` (null when unavailable).
DETECTION_KEYS = (
    "alpha",
    "flagged",
    "flagged_share",
    "tail_share",
    "ones_excess_share",
    "flagged_ones",
    "joint_p",
    "joint_fired",
    "suspect_ones",
    "flag_from",
    "largest_unflagged",
    "power_share",
    "has_power",
)
#: The list members of :func:`detection_json` (empty rather than null when unavailable).
_LIST_KEYS = ("flagged_ones", "suspect_ones")


def estimate_json(est: Any, name: str | None, level: float, labels: list[str] | None = None) -> dict[str, Any]:
    """One estimate as JSON: per label (the spec's ``labels`` when given) the frequency, standard error and interval."""
    lo, hi = est.ci(level)
    if labels is None or len(labels) != len(est.frequencies):
        labels = list(est.domain.labels)
    return {
        "name": name,
        "labels": list(labels),
        "frequencies": est.frequencies.tolist(),
        "std_error": est.std_error.tolist(),
        "ci_low": lo.tolist(),
        "ci_high": hi.tolist(),
        "on_simplex": bool(est.on_simplex),
        "iterations": int(est.iterations),
        "converged": bool(est.converged),
        "fallback": _text_or_none(est.info.get("fallback")),
        "fallback_reason": _text_or_none(est.info.get("fallback_reason")),
        "info": _jsonable(est.info),
    }


def detection_json(oracle: Any, tally: Any) -> dict[str, Any]:
    """The detection screen of a tally (:func:`pldp.estimation.detect.screen`) as JSON.

    ``{"available": true, "reason": null, "alpha", "flagged", "flagged_share", "tail_share",
    "ones_excess_share", "flagged_ones"}`` for unary reports with per-report statistics:
    ``flagged_share`` is the share of reports whose number of ones is in a tail of probability
    below ``alpha`` under every honest law (an honest report is flagged with probability below
    ``2 alpha``), ``ones_excess_share`` a lower bound on the share of reports piling up on some
    number of ones beyond what honest ones allow (null where the honest law of the count depends
    on the item or on unknown level shares). The joint test of the whole histogram of ones
    (:func:`pldp.estimation.detect.joint_test`): ``joint_p``, ``joint_fired`` and the counts it
    finds suspect (``suspect_ones``: ``"detect"`` drops their reports); what the screen can see
    (:func:`pldp.estimation.detect.detection_power`): ``flag_from`` (the smallest flagged count,
    null when none is), ``largest_unflagged``, ``power_share`` (the smallest share of fakes at that
    count detected with power 0.9 at the campaign's number of reports) and ``has_power``
    (``power_share`` at most 5 %). Otherwise ``{"available": false, "reason": why}`` with the
    other members null (``flagged_ones`` and ``suspect_ones`` empty).
    """
    out = screen(oracle, tally)
    if out is not None:
        shown = {k: out.get(k) for k in DETECTION_KEYS}
        return {"available": True, "reason": None, **_jsonable(shown)}
    if getattr(tally, "kind", None) == "direct":
        why = "the reports are single answers (direct encoding), any of which an honest device can send"
    elif not hasattr(oracle, "ones_laws"):
        why = f"{type(oracle).__name__} has no screen of single reports"
    else:
        why = "the tally holds no per-report statistics"
    return {"available": False, "reason": why, **{k: None for k in DETECTION_KEYS}, **{k: [] for k in _LIST_KEYS}}


def check_method(oracle: Any, method: str) -> None:
    """Refuse a method the oracle does not offer, naming those it does (``oracle.methods``).

    Raises
    ------
    EstimationError
        ``method`` is not in ``oracle.methods``.
    """
    if method not in oracle.methods:
        offered = ", ".join(oracle.methods)
        raise EstimationError(f"unknown method {method!r}: this campaign ({type(oracle).__name__}) offers {offered}")


def campaign_estimate(
    spec: Spec, tally: Any, method: str | None = None, level: float = 0.95, top: int = 20
) -> dict[str, Any]:
    """The estimate of a campaign from its tally, in the collector's JSON shape (module docstring).

    Raises
    ------
    ParameterError
        ``level`` is not in (0, 1); a free-text campaign's method is not ``"discover"``.
    EstimationError
        ``method`` is not one of the oracle's (:func:`check_method`).
    PLDPError
        From :func:`pldp.estimate`: a tally of another spec, no reports, an estimator's refusal.

    ``method`` defaults to ``"unbiased"``. A free-text campaign's "tally" is its reports
    (:class:`~pldp.heavy.count.ReportRows`, what an aggregation of report files merges) and its one
    method ``"discover"``, the default (:func:`discovery_estimate`, the ``top`` answers).
    """
    import pldp

    if spec.free_text:
        if method not in (None, *spec.heavy_hitter().methods):
            raise ParameterError(f"a free-text campaign offers the method 'discover', not {method!r}")
        return discovery_estimate(spec, tally, level, top)
    method = "unbiased" if method is None else method

    if not 0.0 < level < 1.0:
        raise ParameterError(f"level must lie in (0, 1), got {level}")
    oracle = spec.mechanism()
    check_method(oracle, method)
    est = pldp.estimate(oracle, tally, method)
    return {
        "campaign": spec.id,
        "n": int(est.n),
        "method": est.method,
        "level": level,
        "methods": list(oracle.methods),
        "detection": detection_json(oracle, tally),
        "attributes": attributes_json(spec, est, level),
    }


def answer_label(answer: str | bytes) -> str:
    """A discovered answer as an estimate's label: its text, or for bytes that are not UTF-8 (an answer
    cut inside a character) their UTF-8 with the undecodable bytes escaped (``\\xNN``).

    Examples
    --------
    >>> answer_label("café"), answer_label(b"caf\\xc3")
    ('café', 'caf\\\\xc3')
    """
    return answer if isinstance(answer, str) else answer.decode("utf-8", "backslashreplace")


def discovery_estimate(spec: Spec, columns: Any, level: float = 0.95, top: int = 20) -> dict[str, Any]:
    """A free-text campaign's estimate (the shape of :func:`campaign_estimate`) from its reports' payload
    columns (by name), or their rows as its protocol reads them (a :class:`~pldp.heavy.count.ReportRows`,
    what an aggregation of report files merges): the ``top`` answers its protocol discovers
    (:meth:`pldp.deploy.Spec.heavy_hitter`), as :func:`discovery_json` writes them.

    Raises
    ------
    ParameterError
        ``level`` is not in (0, 1).
    TallyError
        Rows of another campaign, or a tally that holds no reports (the collector's count).
    PLDPError
        From the protocol: no reports, a group without reports, or a discovery that finds nothing it
        may return.
    """
    if not 0.0 < level < 1.0:
        raise ParameterError(f"level must lie in (0, 1), got {level}")
    protocol = spec.heavy_hitter()
    if isinstance(columns, Mapping):
        reports = protocol.reports_from_columns(columns, spec.oracle_params["level"])
    elif isinstance(getattr(columns, "rows", None), np.ndarray):
        if columns.fingerprint != spec.id:
            raise TallyError(f"these reports are of campaign {columns.fingerprint}, not of {spec.id}")
        reports = protocol.checked(columns.rows)
    else:
        raise TallyError(
            f"a free-text campaign is discovered from its reports (payload columns or ReportRows), not a "
            f"{type(columns).__name__}"
        )
    if reports.shape[0] == 0:
        raise EstimationError("a discovery needs reports; the campaign has none")
    return discovery_json(spec, protocol.discover(reports, top=top), level, top)


def discovery_json(spec: Spec, found: Any, level: float, top: int) -> dict[str, Any]:
    """A free-text campaign's estimate from its protocol's :class:`~pldp.heavy.Discovery`: the answers as
    the labels (:func:`answer_label`), with their shares, standard errors and intervals at ``level``,
    and what the discovery cannot see (the attribute's ``discovery``: the floor, the share that may be
    missed, the bound on bytes, which answers are above the floor). Its one method is ``"discover"``;
    no screen of single reports applies."""
    protocol = spec.heavy_hitter()
    part = estimate_json(found.estimate, None, level)
    answers = found.answers
    part["labels"] = [answer_label(a) for a in answers]
    part["discovery"] = {
        "protocol": protocol.name,
        "top": int(top),
        "max_bytes": found.max_bytes,
        "floor": float(found.floor),
        "miss": float(found.miss),
        "confident": [bool(f > found.floor) for f in found.estimate.frequencies],  # as Discovery.confident
        "text": [isinstance(a, str) for a in answers],
        "limits": found.limits,
    }
    why = "a free-text campaign's reports are local-hashing reports, any of which an honest device can send"
    return {
        "campaign": spec.id,
        "n": int(found.estimate.n),
        "method": "discover",
        "level": level,
        "methods": list(protocol.methods),
        "detection": {
            "available": False,
            "reason": why,
            **{k: None for k in DETECTION_KEYS},
            **{k: [] for k in _LIST_KEYS},
        },
        "attributes": [part],
    }


def attributes_json(spec: Spec, est: Any, level: float) -> list[dict[str, Any]]:
    """The ``attributes`` member of :func:`campaign_estimate`: one :func:`estimate_json` per
    attribute of ``est`` (an estimate, or an :class:`~pldp.estimation.EstimateSet` of several), with
    the answers as the spec names them (an MPLDP oracle's attributes have index labels)."""
    from pldp.estimation import EstimateSet

    parts = list(est) if isinstance(est, EstimateSet) else [est]
    names = list(est.names) if isinstance(est, EstimateSet) else [None]
    labels = spec.root.label_lists(spec.labels)
    return [estimate_json(e, name, level, labs) for e, name, labs in zip(parts, names, labels, strict=True)]


def percent_words(share: float) -> str:
    """A share in percent as the dashboard writes it: one decimal from 0.1 % up, two significant
    digits below (``0.4 %``, ``12.3 %``, ``0.012 %``)."""
    pct = 100.0 * share
    if pct <= 0:
        return "0 %"
    return f"{pct:.1f} %" if pct >= 0.1 else f"{pct:.{1 - math.floor(math.log10(pct))}f} %"


def detection_words(detection: dict[str, Any] | None) -> list[str]:
    """The detection screen in plain words (the dashboard says the same): one or two sentences."""
    if not detection:
        return []
    if not detection["available"]:
        return [f"Screening for fake reports is not available here: {detection['reason']}."]
    share = float(detection["flagged_share"])
    said = (
        f"{percent_words(share)} of reports have a number of ones that honest devices almost never produce; "
        "they may be fake."
    )
    honest = 2 * float(detection["alpha"])
    if share <= honest:
        said += f" That is no more than honest devices produce by chance (up to {percent_words(honest)})."
    words = [said]
    excess = detection.get("ones_excess_share")
    if excess:
        words.append(
            f"At least {percent_words(float(excess))} of reports pile up on one number of ones more often than "
            "honest devices would; they may be fake reports made to look ordinary."
        )
    if detection.get("joint_fired"):
        counts = ", ".join(str(s) for s in detection.get("suspect_ones") or []) or "none in particular"
        p = float(detection["joint_p"])
        said_p = "p < 0.001" if p < 0.001 else f"p = {p:.3f}"
        words.append(
            f"Taken together, the numbers of ones do not fit honest devices ({said_p}); too many reports have "
            f"{counts} ones: “Drop unlikely reports” leaves them out."
        )
    power = power_words(detection)
    if power:
        words.append(power)
    return words


def power_words(detection: dict[str, Any]) -> str | None:
    """What the screen can see at the campaign's budget and number of reports (one sentence), or
    None for an older screen without it."""
    if detection.get("has_power") is None or detection.get("largest_unflagged") is None:
        return None
    top = int(detection["largest_unflagged"])
    share = detection.get("power_share")
    hide = "fakes whose numbers of ones follow the honest ones are not seen by any screen of the counts"
    flag_from = detection.get("flag_from")
    single = (
        "no single report is unlikely enough to be flagged, "
        if flag_from is None
        else f"single reports are flagged from {int(flag_from)} ones, "
    )
    if not detection["has_power"]:
        need = f"{percent_words(float(share))} of reports" if share is not None else "more reports than there are"
        return (
            f"The screen has no power at this campaign's privacy budget and number of reports: {single}and fakes "
            f"with {top} ones are seen only when they are at least {need}; {hide}."
        )
    return (
        f"What the screen can see here: {single}fakes with {top} ones (the most not flagged) are seen from "
        f"{percent_words(float(share or 0.0))} of reports (9 times in 10); {hide}."
    )


def fallback_words(part: dict[str, Any], method: str) -> str | None:
    """The fallback an attribute's estimate took, in plain words; None without one."""
    if not part.get("fallback"):
        return None
    return (
        f"The method {method!r} could not be used on these reports, so this estimate is the "
        f"{part['fallback']!r} method's: {part['fallback_reason']}."
    )


#: The methods that estimate from the detection screen: asked for, the screen is said even where it is missing.
SCREENED_METHODS = ("detect",)


def estimate_text(out: dict[str, Any], names: Sequence[Mapping[int, list[str]] | None] | None = None) -> str:
    """The lines ``pldp campaign estimate`` and ``pldp aggregate`` print: a header, the detection
    screen (where it ran, or where the method asked for it) and any fallback in plain words, then
    per label the frequency and interval; ``names`` (one per attribute, or None), a hashed form's
    buckets named by candidate answers (:func:`~pldp.deploy.labels.bucket_names`), follow their
    bucket's line, every candidate of a bucket listed."""
    lines = [f"campaign {out['campaign']}: n = {out['n']}, method {out['method']}, {out['level']:.0%} intervals"]
    detection = out.get("detection")
    if detection and (detection["available"] or out["method"] in SCREENED_METHODS):
        lines += [f"detection: {w}" for w in detection_words(detection)]
    for a, part in enumerate(out["attributes"]):
        named = names[a] if names is not None else None
        if part["name"]:
            lines += ["", part["name"]]
        fallback = fallback_words(part, out["method"])
        if fallback:
            lines.append(f"fallback: {fallback}")
        width = max(len(str(lab)) for lab in part["labels"])
        rows = zip(part["labels"], part["frequencies"], part["ci_low"], part["ci_high"], strict=True)
        found = part.get("discovery")
        for i, (lab, f, lo, hi) in enumerate(rows):
            said = f"  {', '.join(named[i])}" if named and i in named else ""
            if found is not None and not found["confident"][i]:
                said += "  (below the floor: may be held by nobody)"
            lines.append(f"  {lab!s:<{width}}  {f:8.4f}  [{lo:8.4f}, {hi:8.4f}]{said}")
        if found is not None:
            lines.append(f"discovered by {found['protocol']}: {found['limits']}")
    return "\n".join(lines)


def tidy_estimate(out: dict[str, Any]) -> dict[str, list[Any]]:
    """The estimate as a tidy table, one row per (attribute, label), columns :data:`TIDY_COLUMNS`.

    ``attribute`` is the part's name, or ``""`` for a single attribute (not null: a null key
    would drop out of a default pandas ``groupby``).
    """
    table: dict[str, list[Any]] = {c: [] for c in TIDY_COLUMNS}
    for part in out["attributes"]:
        k = len(part["labels"])
        table["attribute"] += [part["name"] or ""] * k
        table["label"] += [str(lab) for lab in part["labels"]]
        table["frequency"] += part["frequencies"]
        table["std_error"] += part["std_error"]
        table["ci_low"] += part["ci_low"]
        table["ci_high"] += part["ci_high"]
    return table


def _text_or_none(value: Any) -> str | None:
    return None if value is None else str(value)


def _jsonable(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v) for v in obj]
    if hasattr(obj, "tolist"):
        return obj.tolist()
    if isinstance(obj, (str, int, float, bool)) or obj is None:
        return obj
    return str(obj)
