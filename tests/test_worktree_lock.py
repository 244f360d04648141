"""The board's own `git worktree` calls are serialised per repository (issue 39, item 9).

Git writes a new tree's admin folder (.git/worktrees/NAME) in steps; a `worktree list` or
`remove` that reads one half-written fails with "failed to read .git/worktrees/…/commondir".
At 6 drives that blocked a card `transient` in 3 of 5 rounds of 40 cards. Real git, real
threads, and a real `board run` over 40 cards at 6 drives.
"""

from __future__ import annotations

import shutil
import threading
from collections import Counter
from pathlib import Path

import pytest
from board.core.cards import actions
from board.core.git import gitutil, removal

from tests.support.boards import make_board
from tests.support.loop import add_card, board_run, events
from tests.support.paths import script
from tests.support.repos import git


def test_worktree_add_remove_and_list_at_once_never_read_a_half_written_tree(
    tmp_path: Path,
) -> None:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(root))
    git(root, "commit", "-q", "--allow-empty", "-m", "first")
    failed: list[str] = []

    def churn(i: int) -> None:
        tree = str(tmp_path / f"t{i}")
        for _ in range(5):
            for args in (("add", "-q", "-B", f"b{i}", tree, "HEAD"), ("remove", "--force", tree)):
                res = gitutil.git(root, "worktree", *args, check=False)
                if res.returncode != 0:
                    failed.append(res.stderr.strip())

    def listing() -> None:
        for _ in range(60):
            res = gitutil.git(root, "worktree", "list", "--porcelain", check=False)
            if res.returncode != 0:
                failed.append(res.stderr.strip())

    threads = [threading.Thread(target=churn, args=(i,)) for i in range(8)]
    threads += [threading.Thread(target=listing) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failed == [], f"{len(failed)} git worktree calls failed: {sorted(set(failed))[:3]}"


@pytest.mark.parametrize("round_", range(5))
def test_40_cards_at_6_drives_end_done_without_a_git_transient(tmp_path: Path, round_: int) -> None:
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": [script("coder_edit.sh"), "{worktree}", "{card}"]},
        board={"max_concurrent": 6},
    )
    cards = [add_card(store, title=f"card {i}") for i in range(40)]
    for card in cards:  # each its own file, so all six drives run at once
        actions.edit_card(store, card.id, actions.CardEdit(surface=[f"work/{card.id}.txt"]))
    run = board_run(cfg.root, "--until-idle", "--quiet")
    out, err = run.communicate(timeout=600)
    assert run.returncode == 0, err
    drives = store.list_drives()
    built = Counter(d.card for d in drives)
    twice = {
        c: [(d.status, d.ended_at) for d in drives if d.card == c]
        for c, n in built.items()
        if n > 1
    }
    said = {c: events(store, c) for c in twice}
    assert len(drives) == 40, f"a card was built twice: {twice}; its events: {said}"
    at_once = max(
        sum(1 for o in drives if o.started_at <= d.started_at < (o.ended_at or "~")) for d in drives
    )
    assert at_once >= 5, f"at most {at_once} drives ran at once"
    lanes = {c.id: store.get(c.id).lane for c in cards}
    assert set(lanes.values()) == {"done"}, {k: v for k, v in lanes.items() if v != "done"}
    for card in cards:
        said = " ".join(events(store, card.id))
        assert "transient" not in said and "commondir" not in said, (card.id, said)
    store.close()


def test_the_board_deletes_no_admin_entry_while_a_git_worktree_call_holds_the_lock(
    tmp_path: Path,
) -> None:
    """The board deletes a removed tree's admin entry itself (`removal._forget_admin`); a
    `git worktree add -B` reading every entry at that moment died with "Invalid path
    '.git/worktrees/…'" and cost a card a self-heal (1 round in 20 of 40 cards at 6
    drives). The deletion now waits for the lock the board's `git worktree` calls hold."""
    cfg, store = make_board(tmp_path, origin=True)
    store.close()
    tree = tmp_path / "gone"
    git(cfg.root, "worktree", "add", "-q", "--no-checkout", "-b", "gone", str(tree))
    admin = removal._admin_for(cfg, tree)
    assert admin is not None and admin.is_dir()
    shutil.rmtree(tree)
    forgot = threading.Thread(target=removal._forget_admin, args=(cfg, admin))
    with gitutil.admin_locked(cfg.root):  # as a `git worktree add` holds it
        forgot.start()
        forgot.join(0.5)
        assert admin.is_dir(), "the admin entry was deleted while a worktree call ran"
    forgot.join(10)
    assert not forgot.is_alive() and not admin.exists(), "the entry was not deleted after"
