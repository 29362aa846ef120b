"""``python -m pldp.cli``: the ``pldp`` command."""

import sys

from pldp.cli.main import main

sys.exit(main())
