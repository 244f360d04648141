"""What the control room asks the core about git and trees, against real git.

The card screen used to parse `git worktree list` itself and match `feat-` names by hand;
the stranded browser statted packed-refs and the refs directories itself to decide when to
read the list again. Both questions are the core's now (`naming.card_worktree`,
`stranded.refs_signature`); these tests pin their answers.
"""

from __future__ import annotations

from pathlib import Path

from board.core.git import naming, saves, stranded

from tests.support.repos import Repo


def add_tree(r: Repo, name: str, branch: str | None) -> Path:
    path = r.cfg.worktrees_dir / name
    if branch is None:
        r.git("worktree", "add", "-q", "--detach", str(path), "main")
    else:
        r.git("worktree", "add", "-q", "-b", branch, str(path), "main")
    return path


def test_the_listed_trees_carry_their_branch_and_card(r: Repo) -> None:
    mine = add_tree(r, "feat-c-3-lanes", "feat/c-3-lanes")
    loose = add_tree(r, "scratch", None)
    trees = naming.listed_trees(r.cfg)
    assert trees[0] == naming.ListedTree(r.root.resolve(), "main", None), trees[0]
    by_path = {t.path: t for t in trees}
    assert by_path[mine.resolve()] == naming.ListedTree(mine.resolve(), "feat/c-3-lanes", "c-3")
    assert by_path[loose.resolve()] == naming.ListedTree(loose.resolve(), "", None)


def test_a_cards_tree_is_found_by_its_name_or_by_its_branch(r: Repo) -> None:
    named = add_tree(r, "feat-c-3", "someone-elses-name")
    assert naming.card_worktree(r.cfg, "c-3") == named.resolve()
    other = add_tree(r, "elsewhere", "feat/c-4")
    assert naming.card_worktree(r.cfg, "c-4", "feat/c-4") == other.resolve()
    assert naming.card_worktree(r.cfg, "c-4") is None, "no branch given: only names count"


def test_a_longer_card_id_is_not_the_cards_tree(r: Repo) -> None:
    add_tree(r, "feat-c-30", "feat/c-30")
    add_tree(r, "feat-c-3.test1", None)  # a test rung's tree: nobody's
    assert naming.card_worktree(r.cfg, "c-3", "feat/c-3") is None


def test_the_refs_signature_moves_with_every_save_and_drop_and_only_then(
    kept_caches: Path, r: Repo
) -> None:
    head = r.rev("HEAD")
    assert head is not None
    seen = [stranded.refs_signature(r.cfg)]
    assert stranded.refs_signature(r.cfg) == seen[-1], "nothing changed, yet it moved"

    def moved(what: str) -> None:
        now = stranded.refs_signature(r.cfg)
        assert now not in seen, f"the signature did not move when {what}"
        assert stranded.refs_signature(r.cfg) == now
        seen.append(now)

    r.git("update-ref", "refs/heads/stranded/feat-c-1/20260101T000000.000Z", head)
    moved("a save made a loose ref")
    r.git("update-ref", "refs/heads/stranded/feat-c-2/20260101T000000.000Z", head)
    moved("a second tree was saved")
    r.git("pack-refs", "--all")
    moved("the refs were packed")
    r.git("update-ref", "-d", "refs/heads/stranded/feat-c-1/20260101T000000.000Z")
    moved("a packed save was discarded")
    saves.record_stats(r.cfg, ["a stats line\n"])
    moved("the stats file was written")
    stranded.husk_dir(r.cfg).mkdir(parents=True)
    moved("a husk directory appeared")
