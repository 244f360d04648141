"""The `board` command line's verbs over the core, and the context they run in."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from board.cli.show import visible
from board.core.errors import ConfigError, CorruptCard, Refused, StoreError
from board.core.model import LANES, CardDraft

# What a verb needs beyond this (git, board.toml, the store, the card verbs, and the other
# verb modules' handlers) is imported where it is used: building the parser, or listing
# cards, must not pay for the loop, the drive or saved work (tests/test_cli_imports.py).
# The parser itself is board.cli.parsing: the plain forms of `card list` need none.

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    import argparse
    from typing import Any, TypeAlias

    from board.core import config, discover
    from board.core.config import CoderSection
    from board.core.model import Card
    from board.core.store import Store

    # what `add_subparsers` hands out: each verb module's `register(sub)` adds its verbs there
    Subparsers: TypeAlias = argparse._SubParsersAction[argparse.ArgumentParser]


class Context:
    """What a verb needs: the repository root, its config and store, opened on first use."""

    def __init__(self, start: Path, json_out: bool = False) -> None:
        self.start = start
        self.json = json_out
        self._root: Path | None = None
        self._cfg: config.Config | None = None
        self._store: Store | None = None

    @property
    def root(self) -> Path:
        if self._root is None:
            from board.core.git import where  # from .git on disk when plain, else git

            self._root = where.toplevel(self.start)
        return self._root

    @property
    def cfg(self) -> config.Config:
        if self._cfg is None:
            from board.core import config

            self._cfg = config.load(self.root)
        return self._cfg

    @property
    def store(self) -> Store:
        if self._store is None:
            from board.core.store import open_store

            self._store = open_store(self.cfg)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def out(self, text: str = "") -> None:
        print(text, flush=True)

    def emit_json(self, obj: Any) -> None:
        """`json.dumps(obj, indent=2, ensure_ascii=False)`'s text, from a quicker writer."""
        from board.cli import jsonout

        print(jsonout.dumps(obj), flush=True)

    def confirm(self, question: str) -> bool:
        """Ask on the terminal; with no terminal the answer is no (use --yes)."""
        if not sys.stdin.isatty():
            return False
        try:
            answer = input(f"{visible(question)} [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in ("y", "yes")

    def show_card(self, card: Card, as_json: bool) -> None:
        if as_json:
            self.emit_json(card.to_json())
        else:
            self.out(card_line(card))


def card_line(card: Card) -> str:
    badge = f"  [{card.blocked.cls}]" if card.blocked else ""
    return f"{card.id:<8} {card.lane:<9} p{card.priority}  {visible(card.title)}{badge}"


# verbs -------------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import config, discover, presets, storeurl
    from board.core.git import gitutil
    from board.core.store import open_store

    coders: list[str] = args.coder or []
    if "list" in coders:
        from board.core.ops import probe

        found = {name: probe.installed_version(p.program) for name, p in presets.PRESETS.items()}
        ctx.out(presets.listing(found))
        return 0
    unknown = [name for name in coders if presets.preset(name) is None]
    if unknown:
        raise Refused(
            f"no coder preset {unknown[0]!r} (presets: {', '.join(presets.PRESETS)}; "
            "`board init --coder list` shows them)"
        )
    if len(set(coders)) != len(coders):
        raise Refused("a coder preset is named twice")
    url: str | None = args.store
    if url is not None and (why := storeurl.store_url_problem(url)):
        raise Refused(f"--store {why}; nothing written")
    gitutil.require_git()
    root = ctx.root
    path = root / config.CONFIG_NAME
    made = False  # whether init made the store's tables (told as created, else kept)
    setup: discover.Setup | None = None  # the [tree] setup init writes (a new board.toml)
    if path.exists():
        cfg = config.load(root)  # refuses a bad file, changing nothing
        added = _add_presets(ctx, path, cfg.coder, coders)
        if url is not None:
            made = _add_store(ctx, path, cfg, url)
            added = True
            cfg = config.load(root)
        if not added:
            ctx.out(f"{path} exists; keeping it")
        _say_gate(ctx, root, cfg)
    else:
        overrides: dict[str, dict[str, Any]] = {}
        if args.base:
            gitutil.check_branch_name(root, args.base)
        remote = config.SCHEMA["publish"]["remote"][1]  # init writes the default remote
        base = (args.base, "--base") if args.base else gitutil.detect_base(root, remote)
        if base is not None:
            overrides["board"] = {"base": base[0]}
        if args.prefix:
            overrides.setdefault("board", {})["prefix"] = args.prefix
        if coders:
            overrides["coder"] = {
                "ladder": coders,
                "tiers": {n: presets.PRESETS[n].tier_table() for n in coders},
            }
        gate, others = discover.discover(root)
        scratch = config.SCHEMA["board"]["scratch"][1][0]  # init writes the default scratch
        setup = discover.tree_setup(root, gate, scratch)
        if setup is not None:
            overrides["tree"] = {"setup": [list(argv) for argv in setup.argvs]}
            gate = setup.gate or gate  # a gate run by the tree's own environment
        if gate is not None:
            overrides["gate"] = {"argv": list(gate.argv)}
        if url:
            overrides["store"] = {"url": url}
        text = config.template(overrides) + _rules_text(coders)
        config.parse(path, text, root)  # validate before writing
        if url:
            made = _reach_store(root, url)
        path.write_text(text, encoding="utf-8")
        cfg = config.load(root)
        ctx.out(f"wrote {path} (every key with its default)")
        came = base[1] if base else "no branch is checked out, so the default"
        ctx.out(f"base branch: {cfg.board.base} ({came}; [board] base in {config.CONFIG_NAME})")
        for name in coders:
            _say_preset(ctx, name, "wrote")
        if coders:
            ctx.out(f"ladder: {', '.join(coders)} (the first is the first rung)")
        _say_found(ctx, gate, others)
        _say_setup(ctx, setup)
        if url:
            ctx.out(f"store: PostgreSQL at {url} ([store] url in {config.CONFIG_NAME})")
    cfg.board_dir.mkdir(parents=True, exist_ok=True)  # logs and the loop's lock stay local
    store = open_store(cfg, create=True)  # creates or migrates the schema
    ctx.out(f"{'created' if store.created or made else 'kept'} store {store.where}")
    store.close()
    exclude = Path(gitutil.out(root, "rev-parse", "--git-path", "info/exclude"))
    if not exclude.is_absolute():
        exclude = root / exclude
    exclude.parent.mkdir(parents=True, exist_ok=True)
    lines = exclude.read_text().splitlines() if exclude.exists() else []
    wanted = [
        ".board/",
        f"{cfg.board.worktrees.strip('/')}/",
        *(f"{s.strip('/')}/" for s in cfg.board.scratch),
    ]
    wanted += list(setup.excludes) if setup is not None else []
    wanted += [x for name in coders for x in presets.PRESETS[name].excludes]  # what they write
    missing = [w for w in wanted if w not in lines]
    if missing:
        with exclude.open("a") as fh:
            if lines and lines[-1] != "":
                fh.write("\n")
            fh.write("".join(f"{w}\n" for w in missing))
    if gitutil.rev(root, cfg.board.run_branch) is None:
        start = next(
            (
                ref
                for ref in (
                    f"refs/heads/{cfg.board.base}",
                    f"refs/remotes/{cfg.publish.remote}/{cfg.board.base}",
                )
                if gitutil.rev(root, ref) is not None
            ),
            None,
        )
        if start is not None:
            gitutil.git(root, "branch", "--no-track", cfg.board.run_branch, start)
            ctx.out(f"created run branch {cfg.board.run_branch} from {gitutil.short_ref(start)}")
        else:
            ctx.out(
                f"note: base branch {cfg.board.base!r} has no commit yet; "
                "the run branch comes later"
            )
    ctx.out("next: board card add TITLE --spec TEXT --ready, then board run and board tui")
    return 0


def _rules_text(coders: list[str]) -> str:
    """The `[[failures.rules]]` each named preset needs beyond the defaults, commented."""
    from board.core import config, presets

    out = ""
    for name in coders:
        p = presets.PRESETS[name]
        if p.rules:
            tables = [config.rule_table(r) for r in p.rules]
            out += "\n" + config.rules_text(tables, f"{p.title} ({name}): what it prints")
    return out


def _add_presets(ctx: Context, path: Path, coder: CoderSection, coders: list[str]) -> bool:
    """Add each named preset's tier (and rules) to an existing board.toml, changing
    nothing else; a tier it already has is kept. Validated before anything is written."""
    from board.core import config, presets

    new = [n for n in coders if n not in coder.tiers]
    for name in coders:
        if name not in new:
            ctx.out(f"kept [coder.tiers.{name}]: {config.CONFIG_NAME} already has it")
    if not new:
        return bool(coders)
    text = path.read_text(encoding="utf-8")
    extra = ""
    for name in new:
        p = presets.PRESETS[name]
        extra += "\n" + config.tier_text(
            name, list(p.argv), f"{p.title}: board init --coder {name}", p.usage
        )
    extra += _rules_text(new)
    joined = text + ("" if text.endswith("\n") else "\n") + extra
    try:
        config.parse(path, joined, ctx.root)
    except ConfigError as exc:
        raise Refused(
            f"cannot add the preset(s) to {path}: {exc.line()}; nothing changed"
        ) from None
    path.write_text(joined, encoding="utf-8")
    for name in new:
        _say_preset(ctx, name, "added")
    ctx.out(
        f"the ladder is unchanged ({', '.join(coder.ladder)}): add "
        f"{', '.join(new)} to [coder] ladder in {config.CONFIG_NAME} to use "
        f"{'it' if len(new) == 1 else 'them'}"
    )
    return True


def _add_store(ctx: Context, path: Path, cfg: config.Config, url: str) -> bool:
    """`board init --store URL` on an existing board.toml: write `[store] url`, changing
    nothing else. A different URL already there is refused: moving a board to another
    database is a decision to make by hand, not a side effect of init. True when the
    database's tables were made here."""
    from board.core import config, storeurl

    if cfg.store.url == url:
        ctx.out(f"kept [store] url: {config.CONFIG_NAME} already names {url}")
        return False
    if cfg.store.url:
        raise Refused(
            f"{path} already has [store] url = {cfg.store.url}, not {url}: edit it by hand if "
            "the board moves; nothing changed"
        )
    text = path.read_text(encoding="utf-8")
    joined = storeurl.with_store_url(text, url)
    try:
        written = config.parse(path, joined, ctx.root)
    except ConfigError as exc:
        raise Refused(f"cannot add [store] url to {path}: {exc.line()}; nothing changed") from None
    if written.store.url != url:
        raise Refused(
            f"cannot add [store] url to {path} (it spells [store] in a way init does not "
            "edit): set it by hand; nothing changed"
        )
    made = _reach_store(ctx.root, url)
    path.write_text(joined, encoding="utf-8")
    ctx.out(f"added [store] url = {url} to {path}")
    if cfg.db_path.exists():
        ctx.out(
            f"note: {cfg.db_path} is left as it was and its cards are not copied: "
            f"the board now reads and writes only {url}"
        )
    return made


def _reach_store(root: Path, url: str) -> bool:
    """Open the database once before board.toml names it, so an unreachable server or a
    refused login is said in one line and nothing is written. True when this open made
    the board's tables there."""
    from board.core import config
    from board.core.store import open_store

    try:
        store = open_store(config.Config(root, store=config.StoreSection(url=url)), create=True)
    except StoreError as exc:
        raise StoreError(f"{exc.line()}; nothing written") from None
    store.close()
    return store.created


def _say_preset(ctx: Context, name: str, verb: str) -> None:
    import shutil

    from board.core import presets

    p = presets.PRESETS[name]
    rules = f", and {len(p.rules)} failure rule(s) for what it prints" if p.rules else ""
    ctx.out(f"{verb} [coder.tiers.{name}]: {p.title}, headless{rules} (flags: {p.docs})")
    if shutil.which(p.program) is None:
        ctx.out(
            f"note: {p.program} is not installed (not on PATH); the tier is written, and a "
            "drive on it blocks dispatch-infra until it is"
        )


def _say_found(ctx: Context, gate: discover.Found | None, others: list[discover.Found]) -> None:
    if gate is None:
        ctx.out(
            "gate: none found (no Makefile test target, pytest set-up or tests/, package.json "
            "test script, Cargo.toml or go.mod); it stays empty: set [gate] argv"
        )
        return
    ctx.out(f"gate: {' '.join(gate.argv)} — {gate.why}")
    if gate.note:
        ctx.out(f"note: {gate.note}")
    for other in others:
        ctx.out(f"also found, not used: {' '.join(other.argv)} — {other.why}")


def _say_setup(ctx: Context, setup: discover.Setup | None) -> None:
    from board.core import discover

    if setup is None:
        ctx.out(
            "setup: none (no lockfile, and no Python package or requirements for a tree's own "
            "environment); [tree] setup stays empty: set it if a fresh tree must install "
            "something first"
        )
        return
    ctx.out(f"setup: {discover.shown(setup.argvs)} — {setup.why}")
    for note in setup.notes:
        ctx.out(f"note: {note}")


def _say_gate(ctx: Context, root: Path, cfg: config.Config) -> None:
    """An existing [gate] or [tree] setup is never overwritten; an empty one hears what was
    found."""
    from board.core import config, discover

    if cfg.gate.argv and cfg.tree.setup:
        return
    gate, _ = discover.discover(root)
    setup = None if cfg.tree.setup else discover.tree_setup(root, gate, cfg.board.scratch[0])
    if setup is not None and setup.gate is not None:
        gate = setup.gate
    if gate is not None and not cfg.gate.argv:
        ctx.out(
            f"gate: empty in {config.CONFIG_NAME}; found {' '.join(gate.argv)} ({gate.why}): "
            "set [gate] argv to use it"
        )
    if setup is None:
        return
    ctx.out(
        f"setup: empty in {config.CONFIG_NAME}; found {discover.shown(setup.argvs)} "
        f"({setup.why}): set [tree] setup to use it"
    )
    if setup.gate is not None and cfg.gate.argv and cfg.gate.argv != setup.gate.argv:
        ctx.out(
            f"note: with that setup, [gate] argv would be {' '.join(setup.gate.argv)} "
            "(the tree's own environment)"
        )
    for note in setup.notes:
        ctx.out(f"note: {note}")


def _read_spec(args: argparse.Namespace) -> str:
    if args.spec is not None and args.spec_file is not None:
        raise Refused("give --spec or --spec-file, not both")
    if args.spec_file is None:
        return args.spec or ""
    what = "--spec-file -: stdin" if args.spec_file == "-" else f"--spec-file {args.spec_file}"
    try:
        if args.spec_file == "-":
            data = _bounded(sys.stdin.buffer, what)
        else:
            with open(args.spec_file, "rb") as fh:
                data = _bounded(fh, what)
    except OSError as exc:
        raise Refused(f"cannot read {what}: {exc.strerror or exc}") from None
    return _utf8(data, what)


MAX_SPEC_BYTES = 4 * 1024 * 1024  # a spec is prose, not a file dump: /dev/zero ends


def _bounded(fh: Any, what: str) -> bytes:
    """At most MAX_SPEC_BYTES from `fh` (a pipe too); more is refused, and nothing is kept."""
    data = fh.read(MAX_SPEC_BYTES + 1)
    if len(data) > MAX_SPEC_BYTES:
        raise Refused(
            f"{what} is over {MAX_SPEC_BYTES // 2**20} MiB: a spec is the task in words; "
            "point it at the files instead; nothing changed"
        )
    return bytes(data)


def _utf8(data: bytes, what: str) -> str:
    """Text the store can keep: invalid UTF-8 is refused naming where it starts."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def cmd_card_add(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    draft = CardDraft(
        title=args.title,
        spec=_read_spec(args),
        acceptance=args.acceptance or "",
        kind=args.kind,
        lane="ready" if args.ready else "backlog",
        priority=args.priority,
        assignee=args.assignee or "",
        labels=list(args.label or []),
        deps=list(args.dep or []),
        surface=list(args.surface or []),
        best_of=args.best_of,
        race=_race_arg(args.race),
    )
    card = ops.add_card(ctx.store, draft, prefix=ctx.cfg.board.prefix, tiers=ctx.cfg.coder.tiers)
    ctx.show_card(card, args.json)
    return 0


def cmd_card_edit(args: argparse.Namespace, ctx: Context) -> int:
    """`card edit ID`: the flags of `card add`; `--dep`/`--surface`/`--label` add to the
    card's lists and `--no-dep`/`--no-surface` take away. The write expects the card as read
    here (or `--version N`, the version `card show --json` printed), so an edit racing the
    loop's claim is refused naming what changed."""
    from board.core import ops

    store = ctx.store
    seen = store.get(args.id)
    if args.version is not None and args.version != seen.version:
        block = f", blocked {seen.blocked.cls}" if seen.blocked else ""
        raise Refused(
            f"{seen.id}: changed since it was shown (version {args.version} → {seen.version}, "
            f"now {seen.lane}{block}); nothing edited: see `board card show {seen.id}`"
        )
    spec = _read_spec(args) if args.spec is not None or args.spec_file is not None else None
    best_of, race = _edited_count(seen, args)
    edit = ops.CardEdit(
        title=args.title,
        spec=spec,
        acceptance=args.acceptance,
        priority=args.priority,
        kind=args.kind,
        assignee=args.assignee,
        labels=_edited(seen.labels, args.label, args.no_label, "label", seen.id),
        deps=_edited(seen.deps, args.dep, args.no_dep, "dependency", seen.id),
        surface=_edited(seen.surface, args.surface, args.no_surface, "surface glob", seen.id),
        best_of=best_of,
        race=race,
        ready=args.ready,
    )
    if edit == ops.CardEdit():
        raise Refused(f"card edit {seen.id}: nothing to change (give a flag: see --help)")
    card = ops.edit_card(store, seen.id, edit, seen=seen, tiers=ctx.cfg.coder.tiers)
    ctx.show_card(card, args.json)
    return 0


def _race_arg(text: str | None) -> list[str]:
    """`--race a,b,a` as its tier names (spaces around a name dropped); [] when not given.
    An empty name (`a,,b`, `--race ''`) stays, for `check_race` to refuse."""
    return [] if text is None else [name.strip() for name in text.split(",")]


def _edited_count(seen: Card, args: argparse.Namespace) -> tuple[int | None, list[str] | None]:
    """`card edit`'s best of and race (`CardEdit`'s: None leaves it, 0 and [] clear it).
    A flag with its `--no-` twin, or `--race` with `--best-of`, is refused, as is clearing
    what the card does not have (a typo would pass silently); `--best-of 0` stays refused
    (`--no-best-of` says it)."""
    from board.core import ops

    if args.best_of is not None and args.no_best_of:
        raise Refused("--best-of and --no-best-of together: give one of them")
    if args.race is not None and args.no_race:
        raise Refused("--race and --no-race together: give one of them")
    if args.race is not None and args.best_of is not None:
        raise Refused(ops.RACE_AND_BEST_OF)
    if args.best_of is not None:
        ops.check_best_of(args.best_of)
    if args.no_best_of and not seen.best_of:
        raise Refused(f"{seen.id} has no best of of its own to drop (the board's counts)")
    if args.no_race and not seen.race:
        raise Refused(f"{seen.id} has no race to drop")
    best_of = 0 if args.no_best_of else args.best_of
    race = [] if args.no_race else (_race_arg(args.race) if args.race is not None else None)
    return best_of, race


def _edited(
    have: Sequence[str], add: list[str] | None, drop: list[str] | None, what: str, card: str
) -> list[str] | None:
    """The card's list with `add` appended and `drop` taken out; None when neither is given.
    Dropping what the card does not have is refused: a typo would otherwise pass silently."""
    if not add and not drop:
        return None
    missing = [x for x in drop or [] if x not in have]
    if missing:
        raise Refused(f"{card} has no {what} {missing[0]!r} to remove")
    out = [x for x in have if x not in (drop or [])]
    out += [x for x in add or [] if x not in out]
    return out


def cmd_card_list(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.store import unreadable_line

    if args.lane and args.lane not in LANES:
        raise Refused(f"unknown lane {args.lane!r}: one of {', '.join(LANES)}")
    unreadable: list[CorruptCard] = []
    if args.json:  # the store writes the JSON from its rows: the same text, several times quicker
        ctx.out(ctx.store.list_cards_json(args.lane, unreadable=unreadable))
    else:
        for card in ctx.store.list_cards(args.lane, unreadable=unreadable):
            ctx.out(card_line(card))
    if unreadable:  # every other card is listed above; the one line says which was not
        raise StoreError(unreadable_line(unreadable))
    return 0


def cmd_card_show(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.cards import candidates, spend  # here: a listing shows neither

    card = ctx.store.get(args.id)
    total, attempts = spend.card_spend(ctx.store, card.id)
    if args.json:
        data = card.to_json()
        data["dependents"] = ctx.store.dependents(card.id)
        data["timeline"] = [e.to_json() for e in ctx.store.timeline(card.id)]
        data["usage"] = spend.usage_json(total, attempts)
        data["candidates"] = candidates.candidates_json(card, attempts)
        ctx.emit_json(data)
        return 0
    ctx.out(card_line(card))
    if card.blocked:
        ctx.out(f"blocked: {card.blocked.cls}: {visible(card.blocked.reason)}")
    if card.not_before:
        ctx.out(f"not before: {card.not_before} (a back-off; the loop claims it then)")
    for label, value in (
        ("kind", card.kind),
        ("deps", ", ".join(card.deps)),
        ("dependents", ", ".join(ctx.store.dependents(card.id))),
        ("labels", ", ".join(card.labels)),
        ("counts", card.counts()),
        ("best of", _best_of_text(card, ctx.cfg.coder.best_of)),
        ("race", ",".join(card.race)),
        ("source", " ".join(x for x in (card.source, card.source_url) if x)),
        ("surface", ", ".join(card.surface)),
        ("branch", card.branch),
        (
            "pr",
            card.pr_url
            + (f" ({card.pr_state}, polled {card.pr_polled_at})" if card.pr_state else ""),
        ),
    ):
        if value:
            ctx.out(f"{label}: {visible(value)}")
    if card.spec:
        ctx.out("\nspec:\n" + visible(card.spec))
    if card.acceptance:
        ctx.out("\nacceptance:\n" + visible(card.acceptance))
    ctx.out("")
    for line in spend.usage_lines(total, attempts):  # a model's name is the agent's words
        ctx.out(visible(line))
    for line in candidates.candidate_lines(card, attempts):  # a tier is the operator's
        ctx.out(visible(line))
    ctx.out("\ntimeline:")
    for ev in ctx.store.timeline(card.id):
        mark = "💬 " if ev.kind == "comment" else ""
        ctx.out(f"  {ev.at}  {ev.who:<9} {mark}{visible(ev.text)}")
    return 0


MAX_IMPORT_BYTES = 64 * 1024 * 1024  # a backlog of JSON lines, not a disk image


def cmd_card_import(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import ops

    if args.source == "gh":
        if args.scope is not None:
            raise Refused("--scope is for a FILE import; gh's cards are gh#<number>")
        done = ops.import_gh(
            ctx.store,
            ctx.cfg,
            labels=args.label or (),
            milestone=args.milestone,
            limit=args.limit,
            ready=args.ready,
        )
    else:
        given = [f for f in ("label", "milestone", "limit") if getattr(args, f) is not None]
        if given:
            raise Refused(f"--{given[0]} is for board card import gh, not a file")
        what = "stdin" if args.source == "-" else args.source
        try:
            if args.source == "-":
                data = sys.stdin.buffer.read(MAX_IMPORT_BYTES + 1)
            else:
                with open(args.source, "rb") as fh:
                    data = fh.read(MAX_IMPORT_BYTES + 1)
        except OSError as exc:
            raise Refused(f"cannot read {what}: {exc.strerror or exc}; nothing imported") from None
        if len(data) > MAX_IMPORT_BYTES:
            raise Refused(f"{what} is over {MAX_IMPORT_BYTES // 2**20} MiB; nothing imported")
        scope = args.scope if args.scope is not None else Path(what).name
        text = _utf8(data, what)
        done = ops.import_lines(ctx.store, ctx.cfg, text, scope=scope, ready=args.ready)
    if args.json:
        ctx.emit_json(done.to_json())
    else:
        ctx.out(visible(done.summary()))
    return 0


def _best_of_text(card: Card, board: int) -> str:
    """How many candidates build the card at once, and whose word that is; '' for a card
    built by one drive as every card of its board ('' is a line not printed)."""
    if card.race:
        return f"{len(card.race)}, one candidate per tier of its race (the board's is {board})"
    if card.best_of:
        return f"{card.best_of} (its own; the board's [coder] best_of is {board})"
    return f"{board} (the board's [coder] best_of)" if board > 1 else ""


def _simple(verb: str) -> Callable[[argparse.Namespace, Context], int]:
    def handler(args: argparse.Namespace, ctx: Context) -> int:
        from board.core import ops

        store: Store = ctx.store
        reason = getattr(args, "reason", None)
        if verb == "ready":
            card = ops.ready(store, args.id)
        elif verb == "hold":
            card = ops.hold(store, args.id, reason)
        elif verb == "unblock":
            card = ops.unblock(store, args.id)
        elif verb == "requeue":
            card = ops.requeue(store, args.id, reason)
        elif verb == "cancel":
            card = ops.cancel(store, ctx.cfg, args.id, reason=reason or "")
        elif verb == "done":
            card = ops.done(store, ctx.cfg, args.id, reason=reason or "")
        else:  # pragma: no cover
            raise AssertionError(verb)
        ctx.show_card(card, args.json)
        return 0

    return handler


__all__ = ["Context", "ConfigError"]
