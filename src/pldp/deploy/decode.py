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

from pldp.deploy.sampler import AttributesNode, DirectNode, LeveledNode, Node, PaddingNode, UnaryNode
from pldp.deploy.spec import Spec
from pldp.deploy.wire import ReportBatch, columns_of
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


def _first(bad: np.ndarray) -> int:
    return int(np.flatnonzero(bad)[0])


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
                    raise ReportError(f"report {row}: duplicate report id {key.hex()} within the batch", row)
                seen[key] = row
    check_payload(batch.root, batch.columns, n)


def check_payload(root: Node, columns: dict[str, np.ndarray], n: int) -> None:
    """Refuse the first of ``n`` reports whose payload columns are out of range.

    Items and levels in range, no padding bits set, no item or bits where a report's level sends
    none: everything :func:`decode` checks except the report ids, for readers that tally payload
    columns without reading the ids (:mod:`pldp.aggregate`).

    Raises
    ------
    ReportError
        Naming the first bad report (``.index``) and why.
    """
    for prefix, node in _parts(root):
        _check_part(columns, n, node, prefix)


def _parts(root: Node) -> list[tuple[str, Node]]:
    if isinstance(root, AttributesNode):
        return [(f"a{i}.", p) for i, p in enumerate(root.parts)]
    return [("", root)]


def _check_bits(bits: np.ndarray, nbits: int, rows: np.ndarray | None, name: str) -> None:
    pad = 8 * bits.shape[1] - nbits
    if pad:
        last = bits[:, -1] & np.uint8((1 << pad) - 1)
        bad = last != 0 if rows is None else (last != 0) & rows
        if bad.any():
            row = _first(bad)
            raise ReportError(f"report {row}: {name} sets padding bits beyond bit {nbits - 1}", row)


def _check_items(items: np.ndarray, d: np.ndarray | int, rows: np.ndarray | None, name: str) -> None:
    bad = (items < 0) | (items >= d)
    if rows is not None:
        bad &= rows
    if bad.any():
        row = _first(bad)
        raise ReportError(f"report {row}: {name} {int(items[row])} is out of range", row)


def _check_part(cols: dict[str, np.ndarray], n: int, node: Node, prefix: str) -> None:
    if isinstance(node, DirectNode):
        _check_items(cols[prefix + "item"], node.d, None, "item")
    elif isinstance(node, (UnaryNode, PaddingNode)):
        nbits = node.d if isinstance(node, UnaryNode) else node.inner.d
        _check_bits(cols[prefix + "bits"], nbits, None, "the report")
    else:
        assert isinstance(node, LeveledNode)
        level = cols.get(prefix + "level")
        if level is not None:
            _check_items(level, node.t, None, "level")
        else:
            level = np.zeros(n, dtype=np.int64)
        for kind in ("item", "bits"):
            if prefix + kind not in cols:
                continue
            cls = DirectNode if kind == "item" else UnaryNode
            uses = np.array([isinstance(item_node, cls) for item_node in node.items])
            sizes = np.array([item_node.d for item_node in node.items])
            rows = uses[level]
            if kind == "item":
                _check_items(cols[prefix + "item"], sizes[level], rows, "item")
                stray = ~rows & (cols[prefix + "item"] != -1)
            else:
                for t in np.flatnonzero(uses):
                    _check_bits(cols[prefix + "bits"], int(sizes[t]), rows & (level == t), "the report")
                stray = ~rows & np.any(cols[prefix + "bits"] != 0, axis=1)
            if stray.any():
                row = _first(stray)
                raise ReportError(f"report {row}: its level's node sends no {kind}", row)


def native_reports(spec: Spec, batch: ReportBatch) -> tuple[Any, ...]:
    """The arguments of the spec oracle's ``tally`` for a validated batch."""
    return _native(spec, batch.columns)


def _native(spec: Spec, cols: dict[str, np.ndarray]) -> tuple[Any, ...]:
    from pldp.protocols import FEBSF, MPLDP, RCF
    from pldp.protocols.febsf.tally import FEBSFReports
    from pldp.protocols.mpldp import MPLDPReports
    from pldp.protocols.rcf import GroupedReports

    oracle = spec.mechanism()
    data_name = columns_of(spec.root)[-1].name
    if isinstance(oracle, MPLDP):
        levels = np.stack([cols[f"a{i}.level"] for i in range(oracle.n_attributes)], axis=1)
        return (MPLDPReports(tuple(cols[f"a{i}.bits"] for i in range(oracle.n_attributes)), levels),)
    if isinstance(oracle, FEBSF):
        return (FEBSFReports(cols[data_name], cols["level"]),)
    if isinstance(oracle, RCF):
        level = cols["level"]
        parts = []
        for t, node in enumerate(oracle.mechanisms):
            sel = level == t
            parts.append(cols["item"][sel] if node.family == "direct" else cols["bits"][sel])
        return (GroupedReports(tuple(parts), level),)
    return (cols[data_name],)


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


def tally_columns(spec: Spec, columns: dict[str, np.ndarray]) -> Any:
    """The tally of payload columns that :func:`check_payload` accepted (no report ids needed)."""
    return spec.mechanism().tally(*_native(spec, columns))
