"""Tally report files where they lie: one task per Parquet row group, merged in a tree on Dask.

A campaign's reports leave the collector as Parquet files in the wire format's Arrow schema
(:mod:`pldp.deploy.files`). Their tally is a sum over reports and pldp's tallies form a
commutative monoid, so aggregating any number of files is a map-reduce: each row group is
decoded into a small tally (:func:`tally_part`), checked as :func:`pldp.deploy.decode` checks a
batch (:mod:`pldp.deploy.count`), and the tallies are merged on the workers in a tree
(:func:`aggregate`). Each report counts once: files of one collector's store name the store's
numbers of their reports in their footers, so where two of them hold the same reports, the
copies are compared and counted once without reading any other id; ``unique_ids`` counts every
report id once across any files. The design, its trade-offs (what a part checks and what it does
not, when the report ids are read) and the throughput measured up to 10^9 reports are in
``docs/scaling.md``.

===========  ======================================================================
module       holds
===========  ======================================================================
``sources``  paths, URLs and directories of report files (:func:`report_sources`)
``parquet``  opening a file; the checks read from its footer (schema, ``spec`` column,
             the store's numbers); reading some of its reports whole
``parts``    the tally of one file or row group (:func:`tally_part`), and the count a part
             hands on to be merged (FLH: its ``(seed, value)`` table)
``overlap``  the files of one store that hold the same reports, and the check of their copies
``unique``   every report id once: the ids partitioned by hash on disk
``once``     which rows each file's tally skips so that every report counts once
``run``      the map-reduce, serial or on Dask (:func:`aggregate`, :class:`Aggregation`)
===========  ======================================================================

Errors
------
A bad part raises :class:`~pldp.errors.ReportError`. Its message starts with the file and the
row group, then names the first bad report by its row number within the file (``.index``), then
says why: ``reports.parquet: row group 2, row 2097159: item 104 is not in [0, 100)``. A file that
cannot be read, or that has the wrong schema, is named without a row. With ``skip_bad`` every bad
file is left out whole and listed with its reason in :attr:`Aggregation.skipped`.
"""

from pldp.aggregate.parts import tally_part
from pldp.aggregate.run import FANOUT, Aggregation, aggregate
from pldp.aggregate.sources import report_sources

__all__ = ["FANOUT", "Aggregation", "aggregate", "report_sources", "tally_part"]
