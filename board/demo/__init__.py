"""`board demo`: a sandbox board that shows every lane, a stranded branch and a split.

`sandbox.py` makes the sandbox repository, its board.toml and cards, runs the loop and
opens the TUI; `coder.py` is the demo's coder, a real program that edits files with
pauses and output (`python -m board.demo.coder`).
"""
