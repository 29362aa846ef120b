"""Decode wire reports into a tally of their spec, vectorised, refusing a bad batch whole.

:func:`decode` reads reports (a :class:`~pldp.deploy.wire.ReportBatch`, their JSON, or an Arrow
table), validates every one (ids unique within the batch, items and levels in range, no padding
bits set) and tallies them with the spec's oracle, so the tally carries the spec id as its
fingerprint: ``estimate``, ``merge`` and ``load_tally`` refuse it for any other campaign. The
first bad report is named by its index and the reason, and nothing is counted.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from pldp.deploy.count import check_payload, tally_columns
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch
from pldp.errors import ReportError

__all__ = ["as_batch", "check_payload", "decode", "native_reports", "tally_columns"]


def as_batch(spec: Spec, reports: Any) -> ReportBatch:
    """Reports of ``spec`` in any accepted form, as a validated :class:`ReportBatch`."""
    if isinstance(reports, ReportBatch):
        if reports.spec != spec.id:
            raise ReportError(f"the batch is of spec {reports.spec}, not {spec.id}")
        batch = ReportBatch(spec.id, reports.ids, reports.columns, spec.root)
    elif type(reports).__module__.startswith("pyarrow"):
        batch = ReportBatch.from_arrow(reports, spec.root, spec.id)
    else:
        batch = ReportBatch.from_json(reports, spec.root, spec.id)
    _validate(batch)
    return batch


def _validate(batch: ReportBatch) -> None:
    n = len(batch)
    if n > 1:  # duplicate ids: sort the first 64 bits, then compare the few candidates in full
        halves = np.ascontiguousarray(batch.ids).view(np.uint64).reshape(n, 2)
        order = np.argsort(halves[:, 0], kind="stable")
        first = halves[order, 0]
        same = first[1:] == first[:-1]
        if same.any():  # rows sharing their first 64 bits (never, for honest random ids): check in full
            rows = np.unique(np.concatenate([order[1:][same], order[:-1][same]]))
            seen: dict[bytes, int] = {}
            for row in sorted(int(r) for r in rows):
                key = batch.ids[row].tobytes()
                if key in seen:
                    raise ReportError(f"report {row}: a duplicate id (an earlier report's) in the batch", row)
                seen[key] = row
    check_payload(batch.root, batch.columns, n)


def native_reports(spec: Spec, batch: ReportBatch) -> tuple[Any, ...]:
    """The arguments of the spec oracle's ``tally`` for a validated batch."""
    return spec.mechanism().reports_from_columns(batch.columns)


def decode(spec: Spec, reports: Any) -> Any:
    """Reports of a spec to its tally (fingerprint = the spec id), vectorised.

    Parameters
    ----------
    spec : Spec
    reports : ReportBatch, dict, list, str or pyarrow.Table
        A batch from :class:`pldp.client.Client`, JSON reports (one, a list, or the batch form),
        or an Arrow table in the schema of ``docs/wire-format.md`` §5.

    Returns
    -------
    The oracle's tally (a :class:`~pldp.tally.Tally` or a protocol's tally).

    Raises
    ------
    ReportError
        Naming the first bad report (``.index``) and why; nothing is counted.

    Examples
    --------
    >>> import pldp
    >>> from pldp.client import Client
    >>> spec = Spec.from_mechanism(pldp.KRR(1.0, 3), question="Pick one", labels=["a", "b", "c"])
    >>> batch = Client(spec).reports(["a", "b", "a", "c"])
    >>> tally = decode(spec, batch.to_json())
    >>> tally.n, tally.fingerprint == spec.id
    (4, True)
    """
    batch = as_batch(spec, reports)
    return tally_columns(spec, batch.columns)
