#!/usr/bin/env python3
"""A red gate that, before it says red, records on the card's running drive what its coder
spent, as the board records an attempt's usage when it ends: the next attempt (the gate
retry) then starts with the card's spend known to the store.

Usage: gate_spends.py DB COST_USD   (BOARD_CARD names the card, as the drive sets it)
"""

import os
import sys

from board.core.model import Usage
from board.core.store import SQLiteStore

db, cost = sys.argv[1], float(sys.argv[2])
store = SQLiteStore(db)
card = os.environ["BOARD_CARD"]
live = [d for d in store.live_drives() if d.card == card]
assert len(live) == 1, live
store.record_usage(live[0].id, Usage(1200, 300, 4000, cost, "stand-in-model", 2))
store.close()
print(f"GATE-RED: {card} still fails (spent ${cost} on its drive {live[0].id})")
sys.exit(1)
