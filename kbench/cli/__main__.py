"""``python -m kbench.cli``: the ``kbench`` command."""

import sys

from kbench.cli import main

sys.exit(main())
