"""The operator's verbs: card verbs (`actions`), stop, approve and salvage of live work,
a fold conflict resolved by hand (`resolve`), and the split (`split`).

Each is one core call the command line and the TUI share. Above the drive; below the loop.
"""
