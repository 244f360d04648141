#!/usr/bin/env python3
"""A STAND-IN for a forge's command line (gh), not a forge: a hosted PR service cannot
run here. Backed by a JSON state file the test edits, one entry per branch.

  forge.py create STATE --head BRANCH      open a PR (records it, prints its URL)
  forge.py view STATE BRANCH               print the PR as `gh pr view --json` does
  forge.py merge STATE BRANCH ORIGIN BASE  merge it as a forge would: squash the branch
                                           onto BASE in the bare ORIGIN, record MERGED
  forge.py issue-list ISSUES --json FIELDS [--label L]… [--milestone M] [--limit N]
                    [--state open|closed|all]
                                           print the issues of the JSON file ISSUES
                                           ({"issues": [...]}) as `gh issue list --json`
                                           does: newest first, only FIELDS, gh's filters
                                           and defaults (open, 30); "raw": text printed
                                           instead (a forge answering garbage)
An entry may also hold "hang": seconds to sleep first, and "fail": [message, exit code].
Each call is appended to STATE.calls.
"""

import json
import os
import subprocess
import sys
import time

verb, state_path = sys.argv[1], sys.argv[2]
args = sys.argv[3:]
with open(state_path + ".calls", "a") as fh:
    fh.write(json.dumps([verb, *args]) + "\n")
state = json.load(open(state_path)) if os.path.exists(state_path) else {}


def save():
    tmp = state_path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(state, fh)
    os.replace(tmp, state_path)


def git(*a, cwd=None):
    return subprocess.run(
        ["git", *a], cwd=cwd, check=True, capture_output=True, text=True, stdin=subprocess.DEVNULL
    ).stdout.strip()


if verb == "create":
    branch = args[args.index("--head") + 1]
    n = len(state) + 1
    state[branch] = {
        "state": "OPEN",
        "url": f"https://forge.example.test/pull/{n}",
        "mergeable": "MERGEABLE",
        "statusCheckRollup": [],
        "reviewDecision": "",
        "reviews": [],
    }
    save()
    print(state[branch]["url"])
    sys.exit(0)

if verb == "issue-list":

    def flag(name, default=None):
        return args[args.index(name) + 1] if name in args else default

    if state.get("fail"):
        message, code = state["fail"]
        print(message, file=sys.stderr)
        sys.exit(code)
    if "raw" in state:
        sys.stdout.write(state["raw"])
        sys.exit(0)
    fields = flag("--json").split(",")
    wanted = [args[i + 1] for i, a in enumerate(args) if a == "--label"]
    which = flag("--state", "open")
    shown = []
    for issue in sorted(state.get("issues", []), key=lambda i: -i["number"]):
        names = {label["name"] for label in issue.get("labels", [])}
        if which != "all" and issue.get("state", "OPEN").lower() != which:
            continue
        if not set(wanted) <= names:
            continue
        if "--milestone" in args and (issue.get("milestone") or {}).get("title") != flag(
            "--milestone"
        ):
            continue
        shown.append({f: issue[f] for f in fields if f in issue})
    print(json.dumps(shown[: int(flag("--limit", "30"))]))
    sys.exit(0)

branch = args[0]
pr = state.get(branch)
if pr is None:
    print(f'no pull requests found for branch "{branch}"', file=sys.stderr)
    sys.exit(1)
if pr.get("hang"):
    time.sleep(pr["hang"])
if pr.get("fail"):
    message, code = pr["fail"]
    print(message, file=sys.stderr)
    sys.exit(code)
if verb == "view":
    if "raw" in pr:  # a forge answering garbage, or a hostile one
        print(pr["raw"])
        sys.exit(0)
    print(json.dumps({k: v for k, v in pr.items() if k not in ("hang", "fail")}))
    sys.exit(0)
if verb == "merge":
    origin, base = args[1], args[2]
    tree = git("merge-tree", "--write-tree", base, branch, cwd=origin)
    parent = git("rev-parse", base, cwd=origin)
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "forge",
        "GIT_AUTHOR_EMAIL": "forge@example.test",
        "GIT_COMMITTER_NAME": "forge",
        "GIT_COMMITTER_EMAIL": "forge@example.test",
    }
    oid = subprocess.run(
        ["git", "commit-tree", tree, "-p", parent, "-m", f"Merge {branch}"],
        cwd=origin,
        env=env,
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
    ).stdout.strip()
    git("update-ref", f"refs/heads/{base}", oid, parent, cwd=origin)
    pr.update(state="MERGED", mergedAt="2026-12-01T00:00:00Z", mergeCommit={"oid": oid})
    save()
    print(f"merged {branch} as {oid}")
    sys.exit(0)
sys.exit(2)
