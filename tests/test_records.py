"""The hand-written records behave as the dataclasses they replaced.

The card, the config, a drive row and the rest were `@dataclass`es; importing `dataclasses`
and generating their methods at every start cost each verb some 40 ms, so they are plain
classes now (core/records.py). Each is checked here against the `@dataclass` it was,
written out below as it stood (core/model.py, failures.py, presets.py, store/contract.py,
config/): the same constructor (names, order, annotations, defaults, a fresh value where
the default came from a factory), repr, equality over every field and nothing else, hash,
immutability, and `records.replace`/`as_dict`/`fields` as `dataclasses.replace`/`asdict`/
`fields`. A field added to a record and not to its twin here, or to `__init__` and not to
`__match_args__` (what repr, eq and hash read), fails here.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from board.core import config, failures, logs, model, presets, proc, records
from board.core.cards import waits
from board.core.config import (
    DEFAULT_TIER,
    BoardSection,
    CoderSection,
    FailuresSection,
    GateSection,
    PlannerSection,
    PublishSection,
    StoreSection,
    Tier,
    TreeSection,
    TuiSection,
    boardconfig,
    keyschema,
    sections,
)
from board.core.failures import DEFAULT_RULES, DEFAULT_STEPS, Rule
from board.core.model import PRIORITY_DEFAULT, Blocked, Card, LoopBeat, Pause
from board.core.store import contract
from board.tui import commands, health, notify, preview, themes
from board.tui import screenbase as tui_base
from board.tui.commands import VerbCall
from board.tui.health import LiveDrive
from textual.theme import Theme

# the dataclasses as they were


@dataclass(frozen=True)
class Blocked_:
    cls: str
    reason: str


@dataclass(frozen=True)
class Event_:
    seq: int
    card: str
    at: str
    who: str
    kind: str
    text: str


@dataclass(frozen=True)
class Card_:
    id: str
    title: str
    spec: str = ""
    acceptance: str = ""
    kind: str = "feature"
    lane: str = "backlog"
    priority: int = PRIORITY_DEFAULT
    assignee: str = ""
    branch: str = ""
    pr_url: str = ""
    blocked: Blocked | None = None
    labels: tuple[str, ...] = ()
    deps: tuple[str, ...] = ()
    surface: tuple[str, ...] = ()
    created_at: str = ""
    updated_at: str = ""
    version: int = 0
    seq: int = 0
    drive: str = ""
    not_before: str = ""
    pr_state: str = ""
    pr_polled_at: str = ""
    tries: tuple[tuple[str, int], ...] = ()
    rung: str = ""
    told: str = ""
    timeouts: int = 0
    reviews_seen: int = 0


@dataclass(frozen=True)
class LaneMove_:
    seq: int
    card: str
    at: str
    who: str
    old: str
    new: str


@dataclass
class CardDraft_:
    title: str
    spec: str = ""
    acceptance: str = ""
    kind: str = "feature"
    lane: str = "backlog"
    priority: int = PRIORITY_DEFAULT
    assignee: str = ""
    labels: list[str] = field(default_factory=list)
    deps: list[str] = field(default_factory=list)
    surface: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Drive_:
    id: str
    card: str
    attempt: int
    tier: str
    status: str
    started_at: str
    ended_at: str = ""
    pgid: int = 0
    host: str = ""
    owner_pid: int = 0
    log: str = ""
    result: str = ""


@dataclass(frozen=True)
class Pause_:
    tier: str
    cls: str
    reason: str
    until: str
    since: str
    card: str = ""


@dataclass(frozen=True)
class BoardShape_:
    mode: str
    run_branch: str
    base: str
    run_on_remote: bool
    host: str = ""
    recorded_at: str = ""


@dataclass(frozen=True)
class LoopBeat_:
    host: str
    pid: int
    started_at: str
    heartbeat_at: str


@dataclass(frozen=True)
class Rule_:
    pattern: str
    cls: str
    steps: tuple[str, ...] = DEFAULT_STEPS
    exit_codes: tuple[int, ...] = ()
    backoff_s: float = 60.0
    max_attempts: int = 5
    live: bool = False


@dataclass(frozen=True)
class Failure_:
    rule: Rule
    line: str


@dataclass(frozen=True)
class Preset_:
    name: str
    title: str
    argv: tuple[str, ...]
    docs: str
    why: str
    rules: tuple[Rule, ...] = ()
    tested: str = ""
    excludes: tuple[str, ...] = ()


@dataclass(frozen=True)
class Expect_:
    lane: str | tuple[str, ...] | None = None
    version: int | None = None
    drive: str | None = None


@dataclass(frozen=True)
class LaneHeads_:
    totals: dict[str, int]
    blocked: dict[str, int]
    cards: dict[str, list[Card]]
    changes: int
    complete: bool


@dataclass(frozen=True)
class Key_:
    section: str
    name: str
    kind: Any
    default: Any
    doc: str
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Tier_:
    name: str
    argv: tuple[str, ...]
    timeout_s: float = 0


# The section records are made from KEYS (core/config/keyschema.py section_record); each
# twin is the frozen dataclass the same keys make, with the defaults and types as a key's
# kind says them (written here again, so a section record that strays from them shows).
_KIND_TYPE = {
    str: "str",
    int: "int",
    bool: "bool",
    float: "float",
    dict: "dict[str, str]",
    "argv": "tuple[str, ...]",
    "strlist": "tuple[str, ...]",
    "argvs": "tuple[tuple[str, ...], ...]",
    "tiers": "dict[str, Tier]",
    "rules": "tuple[Rule, ...]",
}


def _twin_default(key: config.Key) -> Any:
    if key.kind == "tiers":
        return field(default_factory=lambda: {"default": Tier("default", DEFAULT_TIER)})
    if key.kind == "rules":
        return DEFAULT_RULES
    if isinstance(key.default, dict):
        return field(default_factory=dict)
    if isinstance(key.default, list):
        return tuple(tuple(v) if isinstance(v, list) else v for v in key.default)
    return key.default


def _section_twin(section: str) -> type:
    keys = [k for k in config.KEYS if k.section == section]
    return dataclasses.make_dataclass(
        f"{section.capitalize()}Section_",
        [(k.name, _KIND_TYPE[k.kind], _twin_default(k)) for k in keys],
        frozen=True,
    )


SECTION_TWINS = {section: _section_twin(section) for section in config.SECTION_NAMES}


@dataclass(frozen=True)
class Config_:
    root: Path
    board: BoardSection = field(default_factory=config.BoardSection)
    coder: CoderSection = field(default_factory=config.CoderSection)
    gate: GateSection = field(default_factory=config.GateSection)
    publish: PublishSection = field(default_factory=config.PublishSection)
    tree: TreeSection = field(default_factory=config.TreeSection)
    planner: PlannerSection = field(default_factory=config.PlannerSection)
    failures: FailuresSection = field(default_factory=config.FailuresSection)
    tui: TuiSection = field(default_factory=config.TuiSection)
    store: StoreSection = field(default_factory=config.StoreSection)


# the control room's records, dataclasses until its start stopped paying for them (each
# was some 4M instructions of the first paint): proc, waits, logs and tui/


@dataclass
class Result_:
    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    first_output_timed_out: bool = False
    produced_output: bool = False
    tail: list[str] = field(default_factory=list)
    pid: int = 0
    missing: bool = False


@dataclass
class ClaimView_:
    lanes: dict[str, str]
    working: list[tuple[str, tuple[str, ...]]]
    pauses: list[Pause]
    no_loop: str = ""
    at: datetime = field(default_factory=lambda: waits.now())  # the clock as patched below
    in_use: int = 0
    limit: int = 0


@dataclass
class Chunk_:
    data: bytes = b""
    truncated: bool = False


@dataclass(frozen=True)
class PaletteActions_:
    open_card: Callable[[], Any] | None = None
    toggle_cancelled: Callable[[], Any] | None = None
    filter: Callable[[], Any] | None = None


@dataclass(frozen=True)
class Verb_:
    name: str
    key: str
    help: str
    ask: str = ""
    question: str = ""
    call: VerbCall | None = None
    placeholder: str = "reason"
    show: bool = False
    required: str = ""
    valid: Callable[[Card], bool] | None = None


@dataclass(frozen=True)
class PaletteEntry_:
    text: str
    run: Callable[[], Any]
    help: str


@dataclass(frozen=True)
class LiveDrive_:
    card: str
    tier: str
    attempt: int
    elapsed: str
    last: str


@dataclass(frozen=True)
class Health_:
    at: datetime
    max_concurrent: int
    loops: tuple[LoopBeat, ...] = ()
    last_beat: LoopBeat | None = None
    drives: dict[str, LiveDrive] = field(default_factory=dict)
    pauses: tuple[Pause, ...] = ()
    silent: tuple[LoopBeat, ...] = ()
    host_lease_s: float = 60.0
    store_down: str = ""


@dataclass
class Notices_:
    known: dict[str, str] | None = None
    idle: bool | None = None
    told: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class PreviewData_:
    card: str
    version: int
    head: list[tuple[str, str]]
    tree: str
    log_name: str
    log: list[str] = field(default_factory=list)
    tree_read_at: float = 0.0


@dataclass
class ThemeSet_:
    themes: dict[str, Theme] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


@pytest.fixture(autouse=True)
def fixed_claim_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """ClaimView's `at` defaults to now: one fixed moment, so both twins default alike."""
    monkeypatch.setattr(waits, "now", lambda: datetime(2026, 1, 1, tzinfo=UTC))  # each anew


TWINS: list[tuple[type[records.Record], type]] = [
    (model.Blocked, Blocked_),
    (model.Event, Event_),
    (model.Card, Card_),
    (model.LaneMove, LaneMove_),
    (model.CardDraft, CardDraft_),
    (model.Drive, Drive_),
    (model.Pause, Pause_),
    (model.LoopBeat, LoopBeat_),
    (model.BoardShape, BoardShape_),
    (failures.Rule, Rule_),
    (failures.Failure, Failure_),
    (presets.Preset, Preset_),
    (contract.Expect, Expect_),
    (contract.LaneHeads, LaneHeads_),
    (config.Key, Key_),
    (config.Tier, Tier_),
    (config.Config, Config_),
    *((config.RECORDS[name], twin) for name, twin in SECTION_TWINS.items()),
    (proc.Result, Result_),
    (waits.ClaimView, ClaimView_),
    (logs.Chunk, Chunk_),
    (tui_base.PaletteActions, PaletteActions_),
    (commands.Verb, Verb_),
    (commands.PaletteEntry, PaletteEntry_),
    (health.LiveDrive, LiveDrive_),
    (health.Health, Health_),
    (notify.Notices, Notices_),
    (preview.PreviewData, PreviewData_),
    (themes.ThemeSet, ThemeSet_),
]
IDS = [hand.__name__ for hand, _ in TWINS]


def test_every_record_has_its_twin_here() -> None:
    """A record added without a dataclass twin here goes unchecked: refuse that."""
    found = set()
    modules = (model, failures, presets, contract, keyschema, sections, boardconfig, proc, waits)
    for module in (*modules, logs, tui_base, commands, health, notify, preview, themes):
        for value in vars(module).values():
            if (
                isinstance(value, type)
                and issubclass(value, records.Record)
                and value.__module__ == module.__name__
            ):
                found.add(value)
    assert found == {hand for hand, _ in TWINS}


def _both(hand: type, twin: type, **values: Any) -> tuple[Any, Any]:
    return hand(**values), twin(**values)


def _values(twin: type, tag: str) -> dict[str, Any]:
    """A distinct value for every field (records check no types)."""
    return {f.name: f"{tag}-{f.name}" for f in dataclasses.fields(twin)}


def _required(twin: type) -> dict[str, Any]:
    return {
        f.name: f"x-{f.name}"
        for f in dataclasses.fields(twin)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


@pytest.mark.parametrize(("hand", "twin"), TWINS, ids=IDS)
def test_the_same_fields_and_constructor(hand: type, twin: type) -> None:
    names = tuple(f.name for f in dataclasses.fields(twin))
    assert records.fields(hand) == names == hand.__match_args__ == twin.__match_args__
    if "__slots__" in vars(hand):
        assert tuple(vars(hand)["__slots__"]) == names
    ours = list(inspect.signature(hand).parameters.values())
    theirs = list(inspect.signature(twin).parameters.values())
    assert [p.name for p in ours] == [p.name for p in theirs]
    for mine, want in zip(ours, theirs, strict=True):
        assert mine.kind == want.kind, mine.name
        assert mine.annotation == want.annotation, mine.name
        if want.default is dataclasses._HAS_DEFAULT_FACTORY:  # type: ignore[attr-defined]
            assert mine.default is records.FACTORY, mine.name
        else:
            assert mine.default == want.default, mine.name
            assert type(mine.default) is type(want.default), mine.name
    assert (
        str(inspect.signature(hand)).split(" -> ")[0]
        == str(inspect.signature(twin)).split(" -> ")[0]
    )


@pytest.mark.parametrize(("hand", "twin"), TWINS, ids=IDS)
def test_the_same_defaults_each_made_afresh(hand: type, twin: type) -> None:
    required = _required(twin)
    one, want = _both(hand, twin, **required)
    two = hand(**required)
    for f in dataclasses.fields(twin):
        got = getattr(one, f.name)
        assert got == getattr(want, f.name) and type(got) is type(getattr(want, f.name)), f.name
        if f.default_factory is not dataclasses.MISSING:
            assert got is not getattr(two, f.name), f"{f.name}: one value shared by two records"
    if required:  # a required field left out is refused
        with pytest.raises(TypeError):
            hand(**dict(list(required.items())[:-1]))
    with pytest.raises(TypeError):  # and one too many
        hand(*range(len(dataclasses.fields(twin)) + 1))


@pytest.mark.parametrize(("hand", "twin"), TWINS, ids=IDS)
def test_the_same_repr_eq_and_hash(hand: type, twin: type) -> None:
    values = _values(twin, "v")
    ours, theirs = _both(hand, twin, **values)
    assert repr(ours) == repr(theirs).replace(twin.__name__, hand.__name__, 1)
    assert ours == hand(**values) and not (ours != hand(**values))
    assert ours != theirs and ours.__eq__(theirs) is NotImplemented
    assert ours.__eq__(object()) is NotImplemented
    for name in values:  # every field counts, one at a time
        changed = {**values, name: f"w-{name}"}
        assert (ours == hand(**changed)) is (theirs == twin(**changed)) is False, name
    if twin.__hash__ is None:
        assert hand.__hash__ is None
        with pytest.raises(TypeError):
            hash(ours)
    else:
        assert hash(ours) == hash(theirs) == hash(hand(**values))
        assert len({ours, hand(**values)}) == 1


@pytest.mark.parametrize(("hand", "twin"), TWINS, ids=IDS)
def test_frozen_as_the_dataclass_was(hand: type, twin: type) -> None:
    ours, theirs = _both(hand, twin, **_values(twin, "v"))
    name = dataclasses.fields(twin)[0].name
    if twin.__dataclass_params__.frozen:  # type: ignore[attr-defined]
        for target in (ours, theirs):
            with pytest.raises(AttributeError):
                setattr(target, name, "changed")
            with pytest.raises(AttributeError):
                delattr(target, name)
            with pytest.raises(AttributeError):
                target.brand_new = 1
        assert getattr(ours, name) == f"v-{name}"
    else:
        setattr(ours, name, "changed")
        assert getattr(ours, name) == "changed"


@pytest.mark.parametrize(("hand", "twin"), TWINS, ids=IDS)
def test_replace_as_dict_and_fields_as_dataclasses_do(hand: type, twin: type) -> None:
    values = _values(twin, "v")
    ours, theirs = _both(hand, twin, **values)
    name = dataclasses.fields(twin)[-1].name
    got = records.replace(ours, **{name: "new"})
    want = dataclasses.replace(theirs, **{name: "new"})
    assert type(got) is hand and records.as_dict(got) == dataclasses.asdict(want)
    assert records.as_dict(ours) == dataclasses.asdict(theirs) == values
    assert records.replace(ours) == ours and records.replace(ours) is not ours
    with pytest.raises(TypeError):
        records.replace(ours, no_such_field=1)
    with pytest.raises(TypeError):
        dataclasses.replace(theirs, no_such_field=1)


def test_real_records_too() -> None:
    """With real values: a card with a block, the default config (unhashable, as its
    dicts made the dataclass), a rule whose regex is cached on first use."""
    card = Card(id="c-1", title="t", blocked=Blocked("held", "why"), labels=("a",))
    twin = Card_(id="c-1", title="t", blocked=Blocked("held", "why"), labels=("a",))
    assert repr(card) == repr(twin).replace("Card_", "Card", 1)
    assert hash(card) == hash(twin)
    assert records.replace(card, lane="ready") == Card(**{**vars(card), "lane": "ready"})
    cfg = config.Config(root=Path("/r"))
    assert repr(cfg) == repr(Config_(root=Path("/r"))).replace("Config_", "Config", 1)
    with pytest.raises(TypeError):
        hash(cfg)
    tiers = {"default": Tier("default", DEFAULT_TIER)}
    assert cfg == config.Config(
        Path("/r"), coder=CoderSection(tiers=tiers), tui=TuiSection(keys={})
    )
    assert config.parse(Path("/r/board.toml"), "").coder.tiers == {
        "default": Tier("default", DEFAULT_TIER)
    }
    rule = DEFAULT_RULES[0]
    assert rule.regex is rule.regex and rule == Rule(**records.as_dict(rule))
    assert hash(rule) == hash(Rule_(**records.as_dict(rule)))
