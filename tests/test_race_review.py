"""Best of N with `publish.review = "operator"` (issue 42): the race sends its rule's choice
to review and keeps every other candidate on a `candidate` branch, and the operator chooses
among them with `board approve ID --candidate K`. Real git (a bare origin and a clone), the
real coder and gate scripts (tests/scripts/coder_candidate.sh, gate_candidate.sh), the real
SQLite store, the loop run in-process as `board run --until-idle` runs it, and the real
command line for every verb the operator types."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from board.core.git import naming, worktrees
from board.core.store import Expect

from tests.support.loop import add_card, show
from tests.support.operator import make_tree, pr_argv_ok, pr_calls, remote_sha
from tests.support.race import raced_in_review
from tests.support.repos import git, run_cli


def _raced(tmp_path: Path, sizes: str, n: int, before=None, **publish: Any):  # type: ignore[no-untyped-def]
    board, card = raced_in_review(tmp_path, sizes, n, before, **publish)
    return board.cfg, board.store, card


def _shown(cfg, card_id: str) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    res = run_cli(cfg.root, "card", "show", card_id, "--json")
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _chosen(cfg, card_id: str) -> list[int]:  # type: ignore[no-untyped-def]
    return [c["index"] for c in _shown(cfg, card_id)["candidates"] if c["chosen"]]


def _saves(cfg, tree: str) -> list[str]:  # type: ignore[no-untyped-def]
    out = git(cfg.root, "for-each-ref", "--format=%(refname:short)", f"refs/heads/stranded/{tree}/")
    return [x for x in out.splitlines() if x]


def _kind(cfg, branch: str) -> str:  # type: ignore[no-untyped-def]
    res = run_cli(cfg.root, "stranded", "list", "--json")
    assert res.returncode == 0, res.stderr
    return next(s["kind"] for s in json.loads(res.stdout) if s["branch"] == branch)


def _everything(cfg, store, *cards: str):  # type: ignore[no-untyped-def]
    """What a refusal must leave as it was: every ref, every tree, each card and its timeline."""
    refs = git(cfg.root, "for-each-ref", "--format=%(refname) %(objectname)")
    trees = git(cfg.root, "worktree", "list", "--porcelain")
    return refs, trees, [(store.get(c), store.timeline(c)) for c in cards]


def test_approving_candidate_3_folds_its_work_and_keeps_the_rules_choice(tmp_path: Path) -> None:
    """Candidates write 3, 1 and 2 lines: the rule (smallest green) sends candidate 2 to
    review. `board approve ID --candidate 3` folds candidate 3's work, not candidate 2's;
    candidate 2's tree is on a `candidate` branch with its work, candidate 3's save is gone
    (its content is on the run branch) and card show marks 3 as the chosen one."""
    cfg, store, card = _raced(tmp_path, "3,1,2", 3)
    assert _chosen(cfg, card.id) == [2], "card show does not say candidate 2 waits in review"
    three = _saves(cfg, f"feat-{card.id}-3")
    assert len(three) == 1, three
    assert _saves(cfg, f"feat-{card.id}-2") == [], "the chosen candidate was saved at once"

    res = run_cli(cfg.root, "approve", card.id, "--candidate", "3", "--reason", "clearer")
    assert res.returncode == 0, res.stdout + res.stderr

    after = store.get(card.id)
    assert after.lane == "done" and after.branch == f"feat/{card.id}-3", after
    folded = show(cfg, cfg.board.run_branch, f"work/{card.id}.txt")
    assert folded == "candidate 3 line 1\ncandidate 3 line 2", (
        f"the run branch holds {folded!r}, not candidate 3's work"
    )
    body = git(cfg.root, "log", "-1", "--format=%B", cfg.board.run_branch)
    assert body.startswith(f"{card.id}: a raced feature") and "candidate 3 of 3" in body, body
    two = _saves(cfg, f"feat-{card.id}-2")
    assert len(two) == 1, f"the rule's choice was not saved: {two}"
    assert show(cfg, two[0], f"work/{card.id}.txt") == "candidate 2 line 1"
    assert _kind(cfg, two[0]) == "candidate"
    assert _saves(cfg, f"feat-{card.id}-3") == [], "candidate 3's save stayed after its fold"
    assert _chosen(cfg, card.id) == [3]
    assert not [p for p in cfg.worktrees_dir.iterdir() if not p.name.startswith(".")]
    assert git(cfg.root, "branch", "--list", f"feat/{card.id}*").strip() == ""
    said = [e.text for e in store.timeline(card.id)]
    assert any("approved candidate 3 of 3 over candidate 2" in t and "clearer" in t for t in said)
    store.close()


def test_a_candidate_that_cannot_be_approved_is_refused_in_one_line_changing_nothing(
    tmp_path: Path,
) -> None:
    """Candidates write 1, 2 (red), 3 and 4 lines; candidate 1 waits in review. Refused,
    each in one line and changing nothing: a candidate the race never had, the red one (the
    gate judged it), one whose save was discarded (an earlier race's save of its tree name is
    not taken for it), a card not in review, a card that never
    raced. Then `--candidate 1`, the one in review, is the plain approve."""

    def earlier(cfg, store, card) -> None:  # type: ignore[no-untyped-def]
        """A save of an earlier candidate 3 of the card: never taken for this race's."""
        tree = worktrees.create_worktree(cfg, card.id, "3", store=store)
        (tree / "work").mkdir()
        (tree / "work" / f"{card.id}.txt").write_text("an earlier race's candidate 3\n")
        saved = worktrees.discard_worktree(cfg, tree, store, card.id, kind=naming.KIND_CANDIDATE)
        assert saved.saved is not None
        time.sleep(0.01)  # the race's rows start after the save's stamp (ms)

    cfg, store, card = _raced(tmp_path, "1,2r,3,4", 4, before=earlier)
    waiting = add_card(store, "a card not in review")
    single = add_card(store, "built by one drive")
    make_tree(cfg, single, {f"work/{single.id}.txt": "one drive\n"})
    store.update(single.id, Expect(), {"lane": "review", "branch": f"feat/{single.id}"}, "board")
    three = sorted(_saves(cfg, f"feat-{card.id}-3"))
    assert len(three) == 2, three
    res = run_cli(cfg.root, "stranded", "discard", three[-1], "--yes")  # the race's
    assert res.returncode == 0, res.stderr

    for card_id, k, said in (
        (card.id, "9", "latest race had candidates 1 to 4; there is no candidate 9"),
        (card.id, "2", "candidate 2 is red (its gate stayed red: the gate judged it)"),
        (card.id, "3", "candidate 3's work was not kept"),
        (waiting.id, "1", "expects review, got ready"),
        (single.id, "1", "never raced"),
    ):
        before = _everything(cfg, store, card.id, waiting.id, single.id)
        res = run_cli(cfg.root, "approve", card_id, "--candidate", k)
        assert res.returncode != 0, f"--candidate {k} of {card_id} was not refused: {res.stdout}"
        line = res.stderr.strip()
        assert said in line and "\n" not in line, f"--candidate {k} of {card_id}: {line!r}"
        assert _everything(cfg, store, card.id, waiting.id, single.id) == before, (
            f"a refused --candidate {k} of {card_id} changed something"
        )

    res = run_cli(cfg.root, "approve", card.id, "--candidate", "1")
    assert res.returncode == 0, res.stdout + res.stderr
    assert store.get(card.id).lane == "done"
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") == "candidate 1 line 1"
    assert _saves(cfg, f"feat-{card.id}-1") == [], "the plain approve saved the one it folded"
    assert len(_saves(cfg, f"feat-{card.id}-4")) == 1, "an unchosen candidate was lost"
    store.close()


def test_approving_another_candidate_with_push_pushes_its_branch_and_opens_its_pr(
    tmp_path: Path,
) -> None:
    """publish.mode = push (the PR service is the stub tests/scripts/pr_ok.py, recording its
    calls): candidate 1 of 2 is pushed on feat/<id>-1 with its PR, candidate 2 (the rule's
    choice) is kept on a `candidate` branch and never pushed."""
    record = tmp_path / "prs.jsonl"
    cfg, store, card = _raced(tmp_path, "3,1", 2, mode="push", pr_argv=pr_argv_ok(record))
    assert _chosen(cfg, card.id) == [2]

    res = run_cli(cfg.root, "approve", card.id, "--candidate", "1")
    assert res.returncode == 0, res.stdout + res.stderr

    after = store.get(card.id)
    assert after.lane == "review" and after.pr_url, after
    pushed = remote_sha(cfg, f"feat/{card.id}-1")
    assert pushed, "candidate 1's branch was not pushed"
    text = git(cfg.root, "show", f"{pushed}:work/{card.id}.txt")
    assert text == "candidate 1 line 1\ncandidate 1 line 2\ncandidate 1 line 3"
    heads = [c["argv"][c["argv"].index("--head") + 1] for c in pr_calls(record)]
    assert heads == [f"feat/{card.id}-1"], pr_calls(record)
    assert remote_sha(cfg, f"feat/{card.id}-2") is None, "the rule's choice was pushed"
    two = _saves(cfg, f"feat-{card.id}-2")
    assert len(two) == 1 and show(cfg, two[0], f"work/{card.id}.txt") == "candidate 2 line 1"
    assert _saves(cfg, f"feat-{card.id}-1") == [], "candidate 1's save stayed once pushed"
    store.close()
