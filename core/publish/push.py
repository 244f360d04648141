"""Publish by push: the card branch goes to the remote, a configured command opens the PR.

Many teams publish through pull requests rather than the local fold. The board pushes
the card branch to `publish.remote` and runs `publish.pr_argv` (an argv, never a shell
string; `{branch}`, `{base}`, `{title}`, `{body_file}`, `{card}` and `{remote}` are
substituted inside each item), and records the URL the command prints as the card's
`pr_url`. The card then waits in `review` until its PR merges and the operator marks it
`done`; pushed commits count as published, so that reap strands nothing.

When it fails, nothing is hidden: a refused push or a failing PR command blocks the
card with the command's own output tail, and the card says how to finish by hand. A
push never overwrites someone else's work on the remote: it replaces only what the
board itself pushed last (`--force-with-lease` against the remote-tracking ref), so a
reviewer's commit on the PR branch makes the push refuse instead of vanish.

A draft (a salvage published over a red gate, `--force`) is marked three ways, so the
mark survives any PR tool: an argv item that is exactly `{draft}` becomes `--draft` (it
is dropped for a normal PR), the title starts with `[draft: gate red]`, and the body
says why. `BOARD_DRAFT=1` is also in the PR command's environment.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from board.core import failures, proc
from board.core.cards import split
from board.core.config import Config, FailuresSection
from board.core.git import gitutil
from board.core.model import Blocked, Card
from board.core.publish.owner import Owner, PublishResult, StoodAside, edge_update
from board.core.records import Record, field
from board.core.store import Store

WHO = "board"
DRAFT_ITEM = "{draft}"
DRAFT_FLAG = "--draft"
DRAFT_TITLE = "[draft: gate red] "
BLOCK_CLASS = "terminal"  # a human must look: the remote refused, or the PR tool failed
TAIL_LINES = 12
_URL_RE = re.compile(r"https?://[^\s<>\"'`]+")


class PushOutcome(Record):
    """What a push publish did: pushed or not, the PR's URL, the card as left, what was said."""

    branch: str
    pushed: bool = False
    pr_url: str = ""
    blocked: str = ""  # the block reason when the card was blocked
    blocked_cls: str = BLOCK_CLASS  # its class: `terminal`, or what a failure rule said
    stood_aside: bool = False  # the card moved meanwhile: it was left alone
    card: Card | None = None
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.pushed and not self.blocked and not self.stood_aside


def output_tail(res: proc.Result, lines: int = TAIL_LINES) -> str:
    """The last lines a command printed (stdout and stderr), for a block reason or a note."""
    text = (res.stdout + ("\n" if res.stdout and res.stderr else "") + res.stderr).strip()
    if res.missing:
        text = f"cannot run {res.argv[0]!r}: {text or 'not found'}"
    elif res.timed_out:
        text = (text + "\n" if text else "") + "(timed out and killed)"
    return "\n".join(text.splitlines()[-lines:]) or "(no output)"


def find_url(text: str) -> str:
    """The last URL a PR command printed (gh, glab and most tools print it last)."""
    urls = _URL_RE.findall(text)
    return urls[-1].rstrip(".,;:)]}") if urls else ""


def remote_url(cfg: Config) -> str:
    res = gitutil.git(cfg.root, "remote", "get-url", cfg.publish.remote, check=False)
    return res.stdout.strip() or cfg.publish.remote


def by_hand(cfg: Config, branch: str) -> str:
    """How the operator opens the PR themselves; the branch is already on the remote."""
    return (
        f"the branch {branch} is pushed to {cfg.publish.remote} ({remote_url(cfg)}); "
        f"open a pull request from {branch} into {cfg.board.base} by hand"
    )


def pr_argv(
    cfg: Config, *, branch: str, title: str, body_file: Path, card_id: str, draft: bool
) -> list[str]:
    """`publish.pr_argv` with its placeholders filled in, item by item; no shell ever sees it."""
    items: list[str] = []
    for item in cfg.publish.pr_argv:
        if item == DRAFT_ITEM:
            if draft:
                items.append(DRAFT_FLAG)
            continue
        items.append(item)
    return gitutil.argv_with(
        items,
        branch=branch,
        base=cfg.board.base,
        title=title,
        body_file=str(body_file),
        card=card_id,
        remote=cfg.publish.remote,
        draft="true" if draft else "false",
    )


def diffstat(cfg: Config, branch: str) -> str:
    """`N files changed, …` between the base and the branch ('' when git cannot say)."""
    base = cfg.board.base
    tracking = f"refs/remotes/{cfg.publish.remote}/{cfg.board.base}"
    if gitutil.rev(cfg.root, tracking):
        base = tracking
    res = gitutil.git(cfg.root, "diff", "--shortstat", f"{base}...{branch}", check=False)
    return res.stdout.strip() if res.returncode == 0 else ""


def pr_title(card: Card | None, branch: str, draft: bool) -> str:
    title = card.title.strip() if card is not None else f"Salvaged work from {branch}"
    title = " ".join(title.split())  # one line: a title never carries a newline
    return (DRAFT_TITLE if draft else "") + title


def write_body(
    cfg: Config, card: Card | None, branch: str, draft_why: str = "", note: str = ""
) -> Path:
    """The PR body, written under .board/pr/ (never committed) for `{body_file}`."""
    folder = cfg.board_dir / "pr"
    folder.mkdir(parents=True, exist_ok=True)
    name = card.id if card is not None else branch.replace("/", "-")
    path = folder / f"{name}.md"
    parts: list[str] = []
    if draft_why:
        parts += [f"**Draft: {draft_why}**", ""]
    if card is not None:
        parts += [f"Card {card.id}: {card.title}", ""]
        if card.spec.strip():
            parts += [card.spec.strip(), ""]
        if card.acceptance.strip():
            parts += ["Acceptance:", card.acceptance.strip(), ""]
    if note:
        parts += [note, ""]
    if card is not None and card.issue_number is not None:
        # the forge closes the issue the card came from when this PR merges (`gh#123`)
        parts += [f"Closes #{card.issue_number}", ""]
    stat = diffstat(cfg, branch)
    parts.append(f"Branch `{branch}` into `{cfg.board.base}`" + (f": {stat}." if stat else "."))
    parts += ["", "Built and published by board; the coder only edited files."]
    path.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return path


def push_branch(cfg: Config, branch: str) -> proc.Result:
    """Push `branch` to the remote, replacing only what the board itself pushed there last."""
    tracking = f"refs/remotes/{cfg.publish.remote}/{branch}"
    last = gitutil.rev(cfg.root, tracking) or ""
    return gitutil.git(
        cfg.root,
        "push",
        "--porcelain",
        f"--force-with-lease=refs/heads/{branch}:{last}",
        cfg.publish.remote,
        f"refs/heads/{branch}:refs/heads/{branch}",
        check=False,
        timeout=cfg.publish.timeout_s or gitutil.GIT_TIMEOUT_S,
    )


def run_pr_command(
    cfg: Config, argv: Sequence[str], *, card_id: str, branch: str, draft: bool
) -> proc.Result:
    env = {
        "BOARD_CARD": card_id,
        "BOARD_BRANCH": branch,
        "BOARD_BASE": cfg.board.base,
        "BOARD_DRAFT": "1" if draft else "0",
    }
    return proc.run(argv, cwd=cfg.root, timeout=cfg.publish.timeout_s or 300, env=env)


class _Card:
    """The card side of a publish: every write re-checks the owner, or is skipped."""

    def __init__(
        self, store: Store | None, card: Card | None, owner: Owner, lane: str | None, who: str
    ) -> None:
        self.store = store
        self.card = card
        self.owner = owner
        self.lane = lane
        self.who = who
        self.branch = ""  # the pushed branch, when it is not the one the card names

    @property
    def id(self) -> str:
        return self.card.id if self.card is not None else ""

    def found(self) -> str:
        """Re-read the card: '' while it is still the owner's, else what was found."""
        if self.store is None or self.card is None:
            return ""
        return self.owner.why_not(self.store.get(self.card.id), self.store)

    def write(self, changes: dict[str, Any], note: str) -> Card | None:
        if self.store is None or self.card is None:
            return None
        if self.lane is not None:
            changes = {"lane": self.lane, **changes}
        if self.branch:
            changes = {"branch": self.branch, **changes}
        return edge_update(self.store, self.card.id, self.owner, changes, "push", note, self.who)

    def comment(self, text: str) -> None:
        if self.store is not None and self.card is not None:
            self.store.add_comment(self.card.id, text, self.who)


def publish(
    cfg: Config,
    store: Store | None,
    card: Card | None,
    branch: str,
    owner: Owner,
    *,
    lane: str | None = "review",
    who: str = WHO,
    draft_why: str = "",
    note: str = "",
) -> PushOutcome:
    """Push `branch`, run the PR command, and leave the card in `lane` with its `pr_url`.

    `owner` is what the card must still be at each edge (a drive passes its token, approve
    the version it read); a card moved meanwhile is never written and nothing more is
    done: the outcome says it stood aside. A refused
    push or a failing PR command blocks the card (class `terminal`) with the output tail.
    With no card (salvage of a branch no card owns) only git and the PR command run.
    """
    side = _Card(store, card, owner, lane, who)
    if card is not None and card.branch != branch:
        # the card names the branch its PR is for: the forge is polled, and an approve
        # pushes again, by the card's branch (a best-of-N race pushes feat/<id>-<k>)
        side.branch = branch
    out = PushOutcome(branch=branch)
    draft = bool(draft_why)
    found = side.found()
    if found:
        out.stood_aside = True
        out.lines.append(f"stood aside: {found}; nothing was pushed")
        return out

    res = push_branch(cfg, branch)
    if not res.ok:
        tail = output_tail(res)
        reason = (
            f"push of {branch} to {cfg.publish.remote} was refused (exit {res.returncode}); "
            f"nothing was published. Fix the remote, then `board approve {side.id or 'ID'}` "
            f"to push again. git said: {tail}"
        )
        return _block(side, out, reason, _class_of(cfg.failures, "push", res))
    out.pushed = True
    out.lines.append(f"pushed {branch} to {cfg.publish.remote}")

    found = side.found()
    if found:  # moved during the push: the branch is up, the card is someone else's now
        out.stood_aside = True
        side.comment(f"{branch} was pushed to {cfg.publish.remote}, but {found}: no PR was opened")
        out.lines.append(f"stood aside: {found}; no PR was opened")
        return out

    if card is not None and card.pr_url:  # a rebuild (changes requested): the same PR
        out.pr_url = card.pr_url
        text = f"pushed again to its open PR {card.pr_url}"
        return _finish(side, out, {"blocked": None, "drive": ""}, text)
    if not cfg.publish.pr_argv:
        text = f"{by_hand(cfg, branch)} (publish.pr_argv is empty)"
        return _finish(side, out, {"blocked": None, "drive": ""}, text)

    body = write_body(cfg, card, branch, draft_why, note)
    argv = pr_argv(
        cfg,
        branch=branch,
        title=pr_title(card, branch, draft),
        body_file=body,
        card_id=side.id,
        draft=draft,
    )
    res = run_pr_command(cfg, argv, card_id=side.id, branch=branch, draft=draft)
    if not res.ok:
        reason = (
            f"the PR command failed (exit {res.returncode}); {by_hand(cfg, branch)}, then "
            f"`board unblock {side.id or 'ID'}`. It said: {output_tail(res)}"
        )
        return _block(side, out, reason, _class_of(cfg.failures, "pr", res))
    url = find_url(res.stdout) or find_url(res.stderr)
    out.pr_url = url
    said = f"PR opened: {url}" if url else f"the PR command printed no URL; {by_hand(cfg, branch)}"
    if draft:
        said = f"draft {said} ({draft_why})"
    changes: dict[str, Any] = {"blocked": None, "drive": ""}
    if url:
        changes["pr_url"] = url
    return _finish(side, out, changes, said)


def _finish(side: _Card, out: PushOutcome, changes: dict[str, Any], said: str) -> PushOutcome:
    """The last card write; a card moved since the re-read is left alone and told so."""
    out.lines.append(said)
    try:
        out.card = side.write(changes, said if not changes.get("blocked") else "")
    except StoodAside as exc:
        out.stood_aside = True
        side.comment(f"{out.branch} went to the remote, but {exc.found}: {said}")
        return out
    if out.card is not None and side.store is not None and side.lane == "review":
        # the build got through: a too-wide timeout count no longer applies (docs/lifecycle.md)
        split.clear_count(side.store, out.card.id)
        out.card = side.store.get(out.card.id)
    return out


def _class_of(failures_cfg: FailuresSection, step: str, res: proc.Result) -> str:
    """The block class of a failed push or PR command: a rule's (a forge's rate limit, a
    dropped connection, an expired token) or `terminal`. The self-healing ones are retried
    by the sweep, within the rule's count; `auth` waits for the operator."""
    found = failures.classify(failures_cfg.rules, step, res.tail_text(200), res.returncode)
    return found.cls if found is not None else BLOCK_CLASS


def _block(side: _Card, out: PushOutcome, reason: str, cls: str = BLOCK_CLASS) -> PushOutcome:
    out.blocked = reason
    out.blocked_cls = cls
    return _finish(side, out, {"blocked": Blocked(cls, reason), "drive": ""}, reason)


def publish_card(
    cfg: Config,
    store: Store,
    card: Card,
    tree: str | Path,
    token: str,
    *,
    owner: Owner | None = None,
) -> PublishResult:
    """`publish.publish` for mode `push`: the branch checked out in `tree`, as a PublishResult."""
    owner = owner or Owner("working", token)
    branch = gitutil.out(Path(tree), "branch", "--show-current") or card.branch
    if branch:
        out = publish(cfg, store, card, branch, owner)
    else:  # a detached tree: nothing names what to push, so a human must look
        out = _block(
            _Card(store, card, owner, "review", WHO),
            PushOutcome(branch=""),
            (
                f"{tree} is on no branch, so there is nothing to push; check out the card's "
                f"branch there, then `board approve {card.id}`"
            ),
        )
    reason = "; ".join(out.lines)
    if out.stood_aside:
        return PublishResult("stood-aside", reason=reason)
    if out.blocked:
        return PublishResult("blocked", card=out.card, reason=out.blocked, cls=out.blocked_cls)
    return PublishResult("review", card=out.card, reason=reason)
