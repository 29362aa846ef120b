"""Command-line interface: the ``pldp`` command (also ``python -m pldp.cli``).

``pldp demo``                      the Fig. 1 comparison of KRR, URR and IPRR
``pldp demo-collection``           the same campaign through a real collector, over HTTP
``pldp reproduce PAPER [options]`` run a paper's experiments: tables, figures, report
``pldp datasets list``             the bundled datasets
``pldp mechanism show NAME ...``   a mechanism's probabilities and its exact privacy check
``pldp aggregate SPEC FILES...``   the estimate of a campaign's report files, tallied on Dask
``pldp spec new|verify``           write a campaign spec; check its privacy claims exactly
``pldp clients simulate``          the reports a population's clients would send
``pldp serve``                     run the collector
``pldp campaign ...``              manage campaigns on a running collector, send and read reports
``pldp audit SPEC|MECHANISM``      empirical privacy audit (exit 1 when a pair leaks more than claimed)

The CLI sits on top of the library: it imports :mod:`pldp.audit`, :mod:`pldp.deploy`,
:mod:`pldp.service` and the others (inside its command functions), never the reverse.

* :mod:`pldp.cli.main`: the entry point and the parser, assembled from one module per command
  group: :mod:`~pldp.cli.demo`, :mod:`~pldp.cli.reproduce`, :mod:`~pldp.cli.datasets`,
  :mod:`~pldp.cli.mechanism`, :mod:`~pldp.cli.aggregate`, :mod:`~pldp.cli.deploy` (``spec``,
  ``clients``), :mod:`~pldp.cli.service` (``serve``, ``campaign``; ``campaign submit`` in
  :mod:`~pldp.cli.submit`), :mod:`~pldp.cli.audit`.
* :mod:`pldp.cli.connect`: the ``campaign`` commands' collector (``--server``, ``PLDP_SERVER``),
  token and failures.
* :mod:`pldp.cli.errors`: how a command fails: exit codes, one ``pldp: error:`` line for bad input.
* :mod:`pldp.cli.extras`: the extra each command needs (``pldp serve``: ``service``), checked
  before it runs: one line naming the extra to install, never a traceback.
* :mod:`pldp.cli.options`: options shared by several commands, and the mechanism they name
  (:func:`~pldp.cli.options.add_mechanism_arguments`, :func:`~pldp.cli.options.mechanism_from_args`).
"""

from pldp.cli.main import build_parser, main
from pldp.cli.reproduce import PAPERS

__all__ = ["PAPERS", "build_parser", "main"]
