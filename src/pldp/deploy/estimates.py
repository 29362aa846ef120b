"""A campaign's estimate as JSON, text and a tidy table: one shape wherever it is shown.

The collector serves it (``GET /v1/campaigns/{id}/estimate``), ``pldp campaign estimate`` prints
what the collector served, and ``pldp aggregate`` builds it from a tally of report files. This
module holds that shape without the service's dependencies (FastAPI), so that reading report
files needs no web framework:

``{"campaign": spec id, "n": reports, "method": ..., "level": ..., "attributes": [PART, ...]}``

with one ``PART`` per attribute (one, except for MPLDP): its ``name`` (None for a single
attribute), the spec's ``labels`` and, per label, the frequency, its standard error and the
interval, plus the estimator's diagnostics.
"""

from __future__ import annotations

from typing import Any

from pldp.deploy.spec import Spec
from pldp.errors import ParameterError

__all__ = ["TIDY_COLUMNS", "campaign_estimate", "estimate_json", "estimate_text", "tidy_estimate"]

#: The columns of :func:`tidy_estimate`.
TIDY_COLUMNS = ("attribute", "label", "frequency", "std_error", "ci_low", "ci_high")


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
        "info": _jsonable(est.info),
    }


def campaign_estimate(spec: Spec, tally: Any, method: str = "unbiased", level: float = 0.95) -> dict[str, Any]:
    """The estimate of a campaign from its tally, in the collector's JSON shape (module docstring).

    Raises
    ------
    ParameterError
        ``level`` is not in (0, 1).
    PLDPError
        From :func:`pldp.estimate`: an unknown method, a tally of another spec, no reports.
    """
    import pldp
    from pldp.estimation import EstimateSet

    if not 0.0 < level < 1.0:
        raise ParameterError(f"level must lie in (0, 1), got {level}")
    est = pldp.estimate(spec.mechanism(), tally, method)
    parts = list(est) if isinstance(est, EstimateSet) else [est]
    names = list(est.names) if isinstance(est, EstimateSet) else [None]
    # the answers as the spec names them (an MPLDP oracle's attributes have index labels)
    labels = spec.labels if spec.root.kind == "attributes" else [spec.labels]
    return {
        "campaign": spec.id,
        "n": int(est.n),
        "method": est.method,
        "level": level,
        "attributes": [estimate_json(e, name, level, labs) for e, name, labs in zip(parts, names, labels, strict=True)],
    }


def estimate_text(out: dict[str, Any]) -> str:
    """The lines ``pldp campaign estimate`` prints: a header, then per label the frequency and interval."""
    lines = [f"campaign {out['campaign']}: n = {out['n']}, method {out['method']}, {out['level']:.0%} intervals"]
    for part in out["attributes"]:
        if part["name"]:
            lines += ["", part["name"]]
        width = max(len(str(lab)) for lab in part["labels"])
        for lab, f, lo, hi in zip(part["labels"], part["frequencies"], part["ci_low"], part["ci_high"], strict=True):
            lines.append(f"  {lab!s:<{width}}  {f:8.4f}  [{lo:8.4f}, {hi:8.4f}]")
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
