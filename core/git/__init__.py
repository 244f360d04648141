"""Git and trees: every git call (`gitutil`), the worktrees and their save-then-remove
(`worktrees`, over `naming`, `snapshot`, `saves`, `removal` and the test-only `faults`), the
run branch and the start point (`runbranch`), saved work (`stranded` to list and show it,
`pick` to pick, discard and prune it), what a kept tree is in the middle of (`treestate`), and
a dependency's work (`depwork`).

Above the store; below the drive, publishing and the operator's verbs.
"""
