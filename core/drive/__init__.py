"""One drive: a fresh tree, the coder, the gate, the board's commit, the publish.

Above git and publishing; below the operator's verbs and the loop.
"""
