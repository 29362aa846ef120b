"""Deployable campaigns: verified specs, the wire format, and decoding on the server.

* :class:`Spec`: a campaign's JSON document (``pldp.spec/1``) with a content-hash id;
* :func:`verify`: its privacy claims re-checked from the spec alone with exact arithmetic;
* :class:`ReportBatch`, :func:`decode`: wire reports (JSON or Arrow) to a tally of the spec.

Report files (:mod:`pldp.deploy.files`) name the collector's store and its numbers of the
reports they hold (:mod:`pldp.deploy.origin`), so :func:`pldp.aggregate.aggregate` counts a
report that two files of one collector hold once; files from several collectors are merged with
each report id counted once by :mod:`pldp.deploy.dedupe` (or ``aggregate(..., unique_ids=True)``).
The device side is :class:`pldp.client.Client` (and ``clients/js/pldp-client.mjs``), which sends
its reports to a collector with :class:`pldp.deploy.remote.Collector` (HTTP, the standard library
only); the format is documented in ``docs/wire-format.md``.
"""

from pldp.deploy.decode import decode
from pldp.deploy.spec import FORMAT, Spec, spec_id
from pldp.deploy.verify import Row, Verification, verify
from pldp.deploy.wire import ReportBatch

__all__ = ["FORMAT", "ReportBatch", "Row", "Spec", "Verification", "decode", "spec_id", "verify"]
