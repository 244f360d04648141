"""Saved work shared through the remote, for a board on several hosts.

Each host saves trees in its own clone, so a stranded branch made on one machine is, by
itself, visible on that machine only; when that machine dies, so does the operator's view
of the work. With the run branch on the remote (`publish.run_on_remote`) every stranded
branch is pushed there too (the loop retries until it lands and says so on the card), and
each host fetches the others' into its own `stranded/` branches, so the browser on any
host lists, diffs and picks work saved anywhere. A discard or prune deletes the remote
copy as well (at the commit it saw), so a fetch does not bring it back.
"""

from __future__ import annotations

from dataclasses import dataclass

from board.core.config import Config
from board.core.git import gitutil
from board.core.git.naming import STRANDED as STRANDED_PREFIX

_ZERO = "0" * 40


@dataclass(frozen=True)
class Pushed:
    branch: str
    ok: bool
    why: str = ""


def _tracking(cfg: Config, branch: str) -> str:
    return f"refs/remotes/{cfg.remote}/{branch}"


def _refs(cfg: Config, pattern: str) -> dict[str, str]:
    out = gitutil.out(cfg.root, "for-each-ref", "--format=%(objectname) %(refname)", pattern)
    found = {}
    for line in gitutil.lines(out):
        oid, _, name = line.partition(" ")
        found[name] = oid
    return found


def unpushed(cfg: Config) -> list[str]:
    """Local stranded branches the remote does not hold (as this clone last saw it)."""
    local = _refs(cfg, f"refs/heads/{STRANDED_PREFIX}")
    remote = _refs(cfg, f"refs/remotes/{cfg.remote}/{STRANDED_PREFIX}")
    out = []
    for ref, oid in sorted(local.items()):
        branch = ref.removeprefix("refs/heads/")
        if remote.get(_tracking(cfg, branch)) != oid:
            out.append(branch)
    return out


def push_stranded(cfg: Config, branches: list[str]) -> list[Pushed]:
    """Push these stranded branches in one `git push`; each one's outcome."""
    if not branches:
        return []
    specs = [f"refs/heads/{b}:refs/heads/{b}" for b in branches]
    res = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "push",
        "--porcelain",
        cfg.remote,
        *specs,
        check=False,
        timeout=cfg.publish_timeout_s,
    )
    said = {}
    for line in gitutil.lines(res.stdout):
        parts = line.split("\t")
        if len(parts) >= 3 and parts[0] in ("*", "=", "+", " ", "!", "-"):
            ref = parts[1].split(":", 1)[0].removeprefix("refs/heads/")
            said[ref] = (parts[0] != "!", parts[2])
    out = []
    for branch in branches:
        ok, why = said.get(branch, (False, res.stderr.strip() or f"exit {res.returncode}"))
        out.append(Pushed(branch, ok, why))
    return out


def fetch_stranded(cfg: Config) -> list[str]:
    """Fetch the remote's stranded branches (pruning the ones deleted there) and make a
    local branch for each this clone lacks; returns the branches it made."""
    prefix = STRANDED_PREFIX
    res = gitutil.git(
        cfg.root,
        "fetch",
        "--quiet",
        "--prune",
        cfg.remote,
        f"+refs/heads/{prefix}*:refs/remotes/{cfg.remote}/{prefix}*",
        check=False,
        timeout=cfg.publish_timeout_s,
    )
    if res.returncode != 0:
        return []
    local = _refs(cfg, f"refs/heads/{prefix}")
    made = []
    for ref, oid in sorted(_refs(cfg, f"refs/remotes/{cfg.remote}/{prefix}").items()):
        branch = ref.removeprefix(f"refs/remotes/{cfg.remote}/")
        if f"refs/heads/{branch}" in local:
            continue
        made_ok = gitutil.git(
            cfg.root,
            *gitutil.NO_HOOKS,
            "update-ref",
            "-m",
            f"board: saved work from {cfg.remote}",
            f"refs/heads/{branch}",
            oid,
            _ZERO,
            check=False,
        )
        if made_ok.returncode == 0:
            made.append(branch)
    return made


def delete_remote(cfg: Config, branch: str, commit: str) -> bool:
    """Delete the remote copy of a discarded stranded branch, if it is still at `commit`."""
    res = gitutil.git(
        cfg.root,
        *gitutil.NO_HOOKS,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/{branch}:{commit}",
        cfg.remote,
        f":refs/heads/{branch}",
        check=False,
        timeout=cfg.publish_timeout_s,
    )
    return res.returncode == 0
