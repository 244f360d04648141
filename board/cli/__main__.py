"""`python -m board.cli ARGS` is `board ARGS`."""

import sys

from board.cli.entry import main

sys.exit(main())
