"""`python -m board.cli ARGS` is `board ARGS`."""

import sys

from board.cli.commands import main

sys.exit(main())
