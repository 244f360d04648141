"""The `board` command line: the operator's verbs over the core, one clear line when refused."""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias, cast

from board.cli.show import visible
from board.core.errors import BoardError, ConfigError, CorruptCard, Refused, StoreError
from board.core.model import KINDS, LANES, PRIORITY_DEFAULT, Card, CardDraft
from board.core.text import sanitize

# What a verb needs beyond this (git, board.toml, the store, the card verbs, and the other
# verb modules' handlers) is imported where it is used: building the parser, or listing
# cards, must not pay for the loop, the drive or saved work (tests/test_cli_imports.py).

if TYPE_CHECKING:
    from board.core import config, discover
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


def _add_json(p: argparse.ArgumentParser) -> None:
    p.add_argument("--json", action="store_true", help="print the card as JSON")


# verbs -------------------------------------------------------------------------------------


def cmd_init(args: argparse.Namespace, ctx: Context) -> int:
    from board.core import config, discover, presets
    from board.core.git import gitutil
    from board.core.store import open_store

    coders: list[str] = args.coder or []
    if "list" in coders:
        ctx.out(presets.listing())
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
    if url is not None and (why := config.store_url_problem(url)):
        raise Refused(f"--store {why}; nothing written")
    gitutil.require_git()
    root = ctx.root
    path = root / config.CONFIG_NAME
    made = False  # whether init made the store's tables (told as created, else kept)
    if path.exists():
        cfg = config.load(root)  # refuses a bad file, changing nothing
        added = _add_presets(ctx, path, cfg, coders)
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
                "tiers": {n: {"argv": list(presets.PRESETS[n].argv)} for n in coders},
            }
        gate, others = discover.discover(root)
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
        ctx.out(f"base branch: {cfg.base} ({came}; [board] base in {config.CONFIG_NAME})")
        for name in coders:
            _say_preset(ctx, name, "wrote")
        if coders:
            ctx.out(f"ladder: {', '.join(coders)} (the first is the first rung)")
        _say_found(ctx, gate, others)
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
    wanted = [".board/", f"{cfg.worktrees.strip('/')}/", *(f"{s.strip('/')}/" for s in cfg.scratch)]
    missing = [w for w in wanted if w not in lines]
    if missing:
        with exclude.open("a") as fh:
            if lines and lines[-1] != "":
                fh.write("\n")
            fh.write("".join(f"{w}\n" for w in missing))
    if gitutil.rev(root, cfg.run_branch) is None:
        start = next(
            (
                ref
                for ref in (f"refs/heads/{cfg.base}", f"refs/remotes/{cfg.remote}/{cfg.base}")
                if gitutil.rev(root, ref) is not None
            ),
            None,
        )
        if start is not None:
            gitutil.git(root, "branch", "--no-track", cfg.run_branch, start)
            ctx.out(f"created run branch {cfg.run_branch} from {gitutil.short_ref(start)}")
        else:
            ctx.out(f"note: base branch {cfg.base!r} has no commit yet; the run branch comes later")
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


def _add_presets(ctx: Context, path: Path, cfg: config.Config, coders: list[str]) -> bool:
    """Add each named preset's tier (and rules) to an existing board.toml, changing
    nothing else; a tier it already has is kept. Validated before anything is written."""
    from board.core import config, presets

    new = [n for n in coders if n not in cfg.tiers]
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
            name, list(p.argv), f"{p.title}: board init --coder {name}"
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
        f"the ladder is unchanged ({', '.join(cfg.ladder)}): add "
        f"{', '.join(new)} to [coder] ladder in {config.CONFIG_NAME} to use "
        f"{'it' if len(new) == 1 else 'them'}"
    )
    return True


def _add_store(ctx: Context, path: Path, cfg: config.Config, url: str) -> bool:
    """`board init --store URL` on an existing board.toml: write `[store] url`, changing
    nothing else. A different URL already there is refused: moving a board to another
    database is a decision to make by hand, not a side effect of init. True when the
    database's tables were made here."""
    from board.core import config

    if cfg.store_url == url:
        ctx.out(f"kept [store] url: {config.CONFIG_NAME} already names {url}")
        return False
    if cfg.store_url:
        raise Refused(
            f"{path} already has [store] url = {cfg.store_url}, not {url}: edit it by hand if "
            "the board moves; nothing changed"
        )
    text = path.read_text(encoding="utf-8")
    joined = config.with_store_url(text, url)
    try:
        written = config.parse(path, joined, ctx.root)
    except ConfigError as exc:
        raise Refused(f"cannot add [store] url to {path}: {exc.line()}; nothing changed") from None
    if written.store_url != url:
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
        store = open_store(config.Config(root=root, store_url=url), create=True)
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


def _say_gate(ctx: Context, root: Path, cfg: config.Config) -> None:
    """An existing [gate] is never overwritten; an empty one hears what was found."""
    from board.core import config, discover

    if cfg.gate_argv:
        return
    gate, _ = discover.discover(root)
    if gate is not None:
        ctx.out(
            f"gate: empty in {config.CONFIG_NAME}; found {' '.join(gate.argv)} ({gate.why}): "
            "set [gate] argv to use it"
        )


def _read_spec(args: argparse.Namespace) -> str:
    if args.spec is not None and args.spec_file is not None:
        raise Refused("give --spec or --spec-file, not both")
    if args.spec_file is None:
        return args.spec or ""
    what = "--spec-file -: stdin" if args.spec_file == "-" else f"--spec-file {args.spec_file}"
    try:
        data = (
            sys.stdin.buffer.read() if args.spec_file == "-" else Path(args.spec_file).read_bytes()
        )
    except OSError as exc:
        raise Refused(f"cannot read {what}: {exc.strerror or exc}") from None
    return _utf8(data, what)


def _utf8(data: bytes, what: str) -> str:
    """Text the store can keep: invalid UTF-8 is refused naming where it starts."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise Refused(
            f"{what} is not valid UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start})"
        ) from None


def cmd_card_add(args: argparse.Namespace, ctx: Context) -> int:
    from board.core.cards import actions

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
    )
    card = actions.add_card(ctx.store, draft, prefix=ctx.cfg.prefix)
    ctx.show_card(card, args.json)
    return 0


def cmd_card_edit(args: argparse.Namespace, ctx: Context) -> int:
    """`card edit ID`: the flags of `card add`; `--dep`/`--surface`/`--label` add to the
    card's lists and `--no-dep`/`--no-surface` take away. The write expects the card as read
    here (or `--version N`, the version `card show --json` printed), so an edit racing the
    loop's claim is refused naming what changed."""
    from board.core.cards import actions

    store = ctx.store
    seen = store.get(args.id)
    if args.version is not None and args.version != seen.version:
        block = f", blocked {seen.blocked.cls}" if seen.blocked else ""
        raise Refused(
            f"{seen.id}: expects version {args.version}, got {seen.version} (changed since "
            f"it was shown; now {seen.lane}{block}: see `board card show {seen.id}`); "
            "nothing edited"
        )
    spec = _read_spec(args) if args.spec is not None or args.spec_file is not None else None
    edit = actions.CardEdit(
        title=args.title,
        spec=spec,
        acceptance=args.acceptance,
        priority=args.priority,
        kind=args.kind,
        assignee=args.assignee,
        labels=_edited(seen.labels, args.label, args.no_label, "label", seen.id),
        deps=_edited(seen.deps, args.dep, args.no_dep, "dependency", seen.id),
        surface=_edited(seen.surface, args.surface, args.no_surface, "surface glob", seen.id),
        ready=args.ready,
    )
    if edit == actions.CardEdit():
        raise Refused(f"card edit {seen.id}: nothing to change (give a flag: see --help)")
    card = actions.edit_card(store, seen.id, edit, seen=seen)
    ctx.show_card(card, args.json)
    return 0


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
    card = ctx.store.get(args.id)
    if args.json:
        data = card.to_json()
        data["dependents"] = ctx.store.dependents(card.id)
        data["timeline"] = [e.to_json() for e in ctx.store.timeline(card.id)]
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
    ctx.out("\ntimeline:")
    for ev in ctx.store.timeline(card.id):
        mark = "💬 " if ev.kind == "comment" else ""
        ctx.out(f"  {ev.at}  {ev.who:<9} {mark}{visible(ev.text)}")
    return 0


def _simple(verb: str) -> Callable[[argparse.Namespace, Context], int]:
    def handler(args: argparse.Namespace, ctx: Context) -> int:
        from board.core.cards import actions

        store: Store = ctx.store
        reason = getattr(args, "reason", None)
        if verb == "ready":
            card = actions.ready(store, args.id)
        elif verb == "hold":
            card = actions.hold(store, args.id, reason)
        elif verb == "unblock":
            card = actions.unblock(store, args.id)
        elif verb == "requeue":
            card = actions.requeue(store, args.id, reason)
        elif verb == "cancel":
            card = actions.cancel(store, ctx.cfg, args.id, reason=reason or "")
        elif verb == "done":
            card = actions.done(store, ctx.cfg, args.id, reason=reason or "")
        else:  # pragma: no cover
            raise AssertionError(verb)
        ctx.show_card(card, args.json)
        return 0

    return handler


_VERB_HELP = {
    "ready": "move a backlog card to ready (it needs a title and a spec)",
    "hold": "block a card by hand (class held); the loop never clears it",
    "unblock": "clear a card's block so the queue can take it again",
    "requeue": "send a card back to ready; the reason goes into the next brief",
    "cancel": "cancel a card: dependents are rewired, its trees saved then removed",
    "done": "mark a card done by hand: its trees are saved then removed",
}


class _Parser(argparse.ArgumentParser):
    """argparse that refuses in one line, like every other refusal (not usage + error)."""

    def error(self, message: str) -> NoReturn:
        verb = self.prog.removeprefix("board").strip()
        option = re.match(r"argument (-[^/:\s]+).*: expected one argument$", message)
        if option:  # `--onto -x`: argparse took the value for an option
            message += f" (a value that starts with '-' is written {option[1]}=VALUE)"
        where = f"{verb}: " if verb else ""
        self.exit(2, f"board: {where}{sanitize(message)}; see `{self.prog} --help`\n")


class _Rebuild(Exception):
    """The command line named a verb that was not built: parse again with every verb."""


class _Unbuilt:
    """A verb that was not asked for: it takes its declarations (arguments, defaults, its
    own verbs) and keeps none of them, since building a parser costs a verb ~1 ms and the
    `board` parser has some thirty. Parsing with it means the verb was guessed wrong:
    `_Rebuild`, and `main` builds every verb."""

    def __init__(self) -> None:
        self._actions: list[argparse.Action] = []

    def add_subparsers(self, **kwargs: Any) -> argparse._SubParsersAction[Any]:
        verbs = _Verbs(option_strings=[], prog="", parser_class=_Parser)
        verbs.none = True
        self._actions.append(verbs)  # ops finds `board stranded`'s verbs here
        return verbs

    def parse_known_args(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise _Rebuild

    def __getattr__(self, name: str) -> Callable[..., Any]:
        """add_argument, set_defaults and the rest: nothing is kept."""
        return lambda *args, **kwargs: self


class _Verbs(argparse._SubParsersAction):
    """The verbs of the command line, each listed (so help and a mistyped verb read as with
    every verb built), but only the one the command line names (`only`) built in full."""

    only: str | None = None  # None: every verb built
    none: bool = False  # the verbs of an `_Unbuilt` verb: none built

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if not self.none and self.only in (None, name):
            return super().add_parser(name, **kwargs)
        if "help" in kwargs:  # what argparse lists for the verb in `board --help`
            self._choices_actions.append(self._ChoicesPseudoAction(name, (), kwargs["help"]))
        unbuilt = _Unbuilt()
        self._name_parser_map[name] = unbuilt  # never parsed: see parse_known_args
        return cast(argparse.ArgumentParser, unbuilt)


def _built(parser: argparse.ArgumentParser) -> bool:
    """Whether `parser` is a verb's real parser (not an `_Unbuilt` stand-in)."""
    return not isinstance(parser, _Unbuilt)


def _verb_named(argv: Sequence[str]) -> tuple[str | None, str | None]:
    """The verb `argv` names when that is plain to see (only `-C DIR` before it), and the
    word after it (the verb's own verb, as `list` in `card list`), so only those are built;
    None when it is not (`--help`, no verb, anything unusual): then every verb is, and
    argparse reads the command line as it always has."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg == "-C":
            i += 2
        elif arg.startswith("-C") and not arg.startswith("-C="):
            i += 1
        elif arg.startswith("-"):
            return None, None
        else:
            after = argv[i + 1] if i + 1 < len(argv) else "-"
            return arg, None if after.startswith("-") else after
    return None, None


def _init_arguments(p: argparse.ArgumentParser) -> None:
    """`board init`'s options; its --coder help names the presets, so they are imported
    only when init's parser is built."""
    from board.core import presets

    p.add_argument(
        "--base",
        help="the branch the board builds for (default: the remote's default branch, "
        "else the branch checked out now)",
    )
    p.add_argument("--prefix", help="card id prefix (default c)")
    p.add_argument(
        "--coder",
        action="append",
        metavar="NAME",
        help="write a headless tier for an agent CLI (repeatable, first = first rung): "
        f"{', '.join(presets.PRESETS)}; `--coder list` shows them",
    )
    p.add_argument(
        "--store",
        metavar="URL",
        help="keep the board in PostgreSQL (postgresql://user@host:port/db, no password: "
        "PGPASSWORD or ~/.pgpass), shared by every clone that names it; default: "
        ".board/board.db",
    )


def build_parser(only: str | None = None, only_card: str | None = None) -> argparse.ArgumentParser:
    """Every verb's arguments and help, or (`only`) just that verb's, with every verb still
    listed; of `card`'s own verbs, likewise only `only_card` when given. Only declared here:
    each verb module's handler imports the core modules it works with when it runs, so
    building this costs little."""
    parser = _Parser(
        prog="board",
        description=(
            "Run coding agents over one git repository, card by card, and never lose their "
            "work. Verbs change the store (.board/board.db, or PostgreSQL at [store] url); "
            "`board tui` shows it live."
        ),
    )
    parser.add_argument("-C", dest="directory", default=None, help="run as if started in DIR")
    sub = parser.add_subparsers(dest="verb", metavar="VERB", action=_Verbs)
    assert isinstance(sub, _Verbs)
    sub.only = only
    sub.required = True

    p = sub.add_parser("init", help="set up board.toml, the store and the run branch here")
    if _built(p):
        _init_arguments(p)
    p.set_defaults(func=cmd_init, needs_init=False)

    card = sub.add_parser("card", help="add, list and show cards")
    csub = card.add_subparsers(dest="card_verb", metavar="CARD_VERB", action=_Verbs)
    assert isinstance(csub, _Verbs)
    csub.only = only_card if only == "card" else None
    csub.required = True
    p = csub.add_parser("add", help="add a card (backlog, or ready with --ready)")
    p.add_argument("title")
    p.add_argument("--spec", help="what to build")
    p.add_argument("--spec-file", help="read the spec from a file, or - for stdin")
    p.add_argument("--acceptance", help="how to tell it is done")
    p.add_argument("--ready", action="store_true", help="put it straight in ready")
    p.add_argument("--dep", action="append", metavar="ID", help="a card this one waits on")
    p.add_argument("--surface", action="append", metavar="GLOB", help="files it may touch")
    p.add_argument("--label", action="append", metavar="LABEL")
    p.add_argument("--priority", type=int, default=PRIORITY_DEFAULT, help="0 (urgent) to 4")
    p.add_argument("--kind", choices=KINDS, default="feature")
    p.add_argument("--assignee")
    _add_json(p)
    p.set_defaults(func=cmd_card_add)
    p = csub.add_parser(
        "edit",
        help="change a card not yet started (backlog or ready)",
        description="Change a card not yet started (backlog or ready). Refused, changing "
        "nothing, when the loop claimed it meanwhile.",
    )
    p.add_argument("id", metavar="ID")
    p.add_argument("--title", help="a new title (one line)")
    p.add_argument("--spec", help="a new spec")
    p.add_argument("--spec-file", help="read the new spec from a file, or - for stdin")
    p.add_argument("--acceptance", help="how to tell it is done")
    p.add_argument("--ready", action="store_true", help="move it to ready (it needs a spec)")
    p.add_argument("--dep", action="append", metavar="ID", help="add a card it waits on")
    p.add_argument("--no-dep", action="append", metavar="ID", help="no longer wait on ID")
    p.add_argument("--surface", action="append", metavar="GLOB", help="add files it may touch")
    p.add_argument("--no-surface", action="append", metavar="GLOB", help="take a glob away")
    p.add_argument("--label", action="append", metavar="LABEL", help="add a label")
    p.add_argument("--no-label", action="append", metavar="LABEL", help="take a label away")
    p.add_argument("--priority", type=int, help="0 (urgent) to 4")
    p.add_argument("--kind", choices=KINDS)
    p.add_argument("--assignee")
    p.add_argument(
        "--version",
        type=int,
        metavar="N",
        help="refuse unless the card is still at version N (as `card show --json` showed it)",
    )
    _add_json(p)
    p.set_defaults(func=cmd_card_edit)
    p = csub.add_parser("list", help="list cards")
    p.add_argument("--lane", help=f"only this lane ({', '.join(LANES)})")
    p.add_argument("--json", action="store_true", help="print a JSON array of cards")
    p.set_defaults(func=cmd_card_list)
    p = csub.add_parser("show", help="show a card with its timeline")
    p.add_argument("id")
    _add_json(p)
    p.set_defaults(func=cmd_card_show)

    for verb, text in _VERB_HELP.items():
        p = sub.add_parser(verb, help=text, description=text)
        p.add_argument("id", metavar="ID")
        p.add_argument("--reason", help="why (required for hold)")
        _add_json(p)
        p.set_defaults(func=_simple(verb))

    from board.cli import demo, logs, ops, run, status, stranded, tui

    for module in (stranded, logs, run, status, ops, tui, demo):
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    given = sys.argv[1:] if argv is None else list(argv)
    try:
        verb, then = _verb_named(given)
        args = build_parser(only=verb, only_card=then).parse_args(given)
    except _Rebuild:  # the verb was guessed wrong: read the command line with every verb
        args = build_parser().parse_args(given)
    bad = next((a for a in given if not _encodes(a)), None)
    if bad is not None:
        print(f"board: an argument is not valid UTF-8: {_raw(bad)}", file=sys.stderr)
        return 2
    if args.directory is not None and not Path(args.directory).is_dir():
        what = "is not a directory" if Path(args.directory).exists() else "does not exist"
        print(f"board: -C {sanitize(args.directory)}: {what}", file=sys.stderr)
        return 2
    start = Path(args.directory) if args.directory else Path.cwd()
    ctx = Context(start, json_out=getattr(args, "json", False))
    try:
        return int(args.func(args, ctx) or 0)
    except BoardError as exc:
        # a refusal may quote what the operator typed (a hostile branch name): shown, not obeyed
        print(f"board: {sanitize(exc.line())}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("board: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # one line for the operator; the trace only when asked for
        if os.environ.get("BOARD_DEBUG"):
            raise
        print(
            f"board: internal error: {type(exc).__name__}: {sanitize(str(exc))} "
            "(BOARD_DEBUG=1 shows more)",
            file=sys.stderr,
        )
        return 70
    finally:
        ctx.close()


def _encodes(arg: str) -> bool:
    """False for an argument holding bytes that were not UTF-8 (Python keeps them as
    surrogates, which the store cannot write)."""
    try:
        arg.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _raw(arg: str) -> str:
    """An argument as the bytes the operator typed, escaped: '\\xff' for a stray byte."""
    try:
        return ascii(arg.encode("utf-8", "surrogateescape"))[1:]
    except UnicodeEncodeError:
        return ascii(arg)


__all__ = ["main", "Context", "build_parser", "ConfigError"]

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
