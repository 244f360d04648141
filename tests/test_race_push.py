"""Best of N (issue 42) with `publish.mode = "push"`: the chosen candidate's own branch
`feat/<id>-<k>` is pushed to the real bare origin and its PR opened on the forge STAND-IN
(tests/standins/forge.py, a real executable over a JSON state file: a hosted PR service
cannot run here); every other candidate is saved kind `candidate`. Real git, the real coder
and gate scripts, the real SQLite store, the loop in-process as `board run --until-idle`."""

from __future__ import annotations

import json
from pathlib import Path

from board.core import proc
from board.core.git import naming
from board.core.loop import Loop
from board.core.publish import forge

from tests.support.boards import make_board
from tests.support.loop import add_card, show
from tests.support.paths import STANDINS, script
from tests.support.repos import git
from tests.test_race import _stranded_json, _tier

FORGE = str(STANDINS / "forge.py")


def _remote_heads(origin: Path) -> dict[str, str]:
    text = git(origin, "for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads/")
    return dict(line.split() for line in text.splitlines() if line)


def test_a_race_in_push_mode_pushes_the_chosen_candidates_branch_and_opens_its_pr(
    tmp_path: Path,
) -> None:
    """Three candidates write 3, 1 (red) and 2 lines: candidate 3 is chosen, its branch
    feat/c-1-3 is on origin holding its lines and has the one PR, the card waits in review
    with that PR's URL and names that branch, so a merge on the forge is found by the
    poll; candidates 1 and 2 are `candidate` saves, pushed nowhere."""
    log = tmp_path / "coders.log"
    state = tmp_path / "forge.json"
    cfg, store = make_board(
        tmp_path,
        origin=True,
        tiers={"default": _tier("3,1r,2@1", log)},
        gate=[script("gate_candidate.sh"), "{worktree}"],
        coder={"best_of": 3},
        board={"max_concurrent": 3},
        gate_opts={"retries": 0},
        publish={
            "mode": "push",
            "pr_argv": [FORGE, "create", str(state), "--head", "{branch}"],
            "pr_state_argv": [FORGE, "view", str(state), "{branch}"],
            "poll_s": 0.2,
        },
    )
    card = add_card(store, "a raced feature, pushed", surface=["work/**"])
    assert Loop(cfg, store).run(until_idle=True) == 0

    chosen = naming.branch_for(card.id, "3")
    assert chosen == f"feat/{card.id}-3"
    after = store.get(card.id)
    assert after.lane == "review", [e.text for e in store.timeline(card.id)]
    prs = json.loads(state.read_text())
    assert list(prs) == [chosen], f"PRs were opened for {list(prs)}, not for {chosen} alone"
    assert after.pr_url == prs[chosen]["url"]
    assert after.branch == chosen, f"the card names {after.branch}, not the pushed branch"

    origin = Path(git(cfg.root, "remote", "get-url", "origin"))
    heads = _remote_heads(origin)
    pushed = sorted(h for h in heads if h.startswith("feat/"))
    assert pushed == [chosen], f"origin holds {pushed}, not the chosen branch alone"
    text = git(origin, "show", f"{heads[chosen]}:work/{card.id}.txt")
    assert text == "candidate 3 line 1\ncandidate 3 line 2", text
    assert show(cfg, cfg.board.run_branch, f"work/{card.id}.txt") is None, (
        "push mode folded onto the run branch"
    )

    saves = [s for s in _stranded_json(cfg) if s["card"] == card.id]
    kinds = sorted((s["tree"], s["kind"]) for s in saves)
    assert kinds == [
        (f"feat-{card.id}-1", naming.KIND_CANDIDATE),
        (f"feat-{card.id}-2", naming.KIND_CANDIDATE),
    ], f"the other candidates were not saved as candidates: {saves}"
    by_tree = {s["tree"]: s["branch"] for s in saves}
    one = show(cfg, by_tree[f"feat-{card.id}-1"], f"work/{card.id}.txt")
    assert one == "candidate 1 line 1\ncandidate 1 line 2\ncandidate 1 line 3"
    assert show(cfg, by_tree[f"feat-{card.id}-2"], f"work/{card.id}.txt") == "candidate 2 line 1"

    # the forge merges the PR: the poll of the card (by its branch) finds it, the card is done
    merged = proc.run([FORGE, "merge", str(state), chosen, str(origin), "main"], timeout=60)
    assert merged.returncode == 0, merged.stderr
    polled = forge.poll(cfg, store, store.get(card.id))
    assert polled.merged, polled
    assert store.get(card.id).lane == "done"
    store.close()
