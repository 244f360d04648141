"""Publishing a built card: the serial fold onto the run branch, or a push and a PR, and
the ownership check every edge goes through.

Above git and the store; below the drive.
"""
