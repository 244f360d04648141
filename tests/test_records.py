"""Every record behaves as the dataclass its fields declare.

The board's records are declared as dataclasses are (`class Card(Frozen): id: str ...`)
but made by core/records.py, which imports neither dataclasses nor inspect nor typing (a
quick verb's start). Each record found in board/, core/ and tui/ is checked here against a
`dataclasses.make_dataclass` twin made from the same declared fields (names, annotations,
defaults, factories, repr, frozen): the same constructor (names, order, annotations,
defaults, a fresh value where the default comes from a factory), repr, equality over every
field and nothing else, hash, immutability, `__match_args__`, `__slots__`, and
`records.replace`/`as_dict`/`fields` as `dataclasses.replace`/`asdict`/`fields`. No record
writes its own `__init__` (config's section records are declared from KEYS).
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import json
import pkgutil
from pathlib import Path
from typing import Any

import pytest
from board.core import config, records
from board.core.config import DEFAULT_TIER, CoderSection, Tier, TuiSection
from board.core.failures import DEFAULT_RULES, Rule
from board.core.model import Blocked, Card
from board.core.records import Frozen, Record, field

import board
from board import core, tui
from tests.support.procs import python_child


def _all_records() -> list[type]:
    """Every record class the board defines: each module under board/, core/ and tui/
    imported, its own subclasses of Record kept."""
    found: dict[str, type] = {}
    for package in (board, core, tui):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            for value in vars(module).values():
                if (
                    isinstance(value, type)
                    and issubclass(value, Record)
                    and value.__module__ == module.__name__
                    and value not in (Record, Frozen)
                ):
                    found[f"{module.__name__}.{value.__qualname__}"] = value
    return [found[name] for name in sorted(found)]


RECORDS = _all_records()
IDS = [f"{r.__module__.removeprefix('board.')}.{r.__qualname__}" for r in RECORDS]


def _hand_written(record: type) -> bool:
    """Whether the record's `__init__` is its own, not made from its fields."""
    return not record.__init__.__code__.co_filename.startswith("<record ")


def _twin(record: type) -> Any:
    """The dataclass the record's fields declare, made by dataclasses itself."""
    specs: list[tuple[str, Any, Any]] = []
    annotations = record.__record_annotations__
    for name, spec in record.__record_fields__.items():
        kwargs: dict[str, Any] = {"repr": spec.repr}
        if spec.default_factory is not None:
            kwargs["default_factory"] = spec.default_factory
        elif spec.default is not records._MISSING:
            kwargs["default"] = spec.default
        specs.append((name, annotations[name], field_(**kwargs)))
    # without slots: a frozen dataclass with slots made by make_dataclass cannot refuse a
    # new attribute on 3.11 (its __setattr__'s super() names the class before slots)
    return dataclasses.make_dataclass(f"{record.__name__}_", specs, frozen=record.__frozen__)


def test_no_record_writes_its_own_init() -> None:
    """Each record's fields are written once, as it declares them: none writes `__init__`."""
    assert [r.__qualname__ for r in RECORDS if _hand_written(r)] == []


def _slotted(record: type) -> bool:
    """Whether the record has slots of its own fields (no instance dict)."""
    return bool(vars(record).get("__slots__"))


def field_(**kwargs: Any) -> Any:
    return dataclasses.field(**kwargs)


def _deterministic(factory: Any) -> bool:
    """Whether a factory makes equal values twice: a type does (list, dict), the clock not."""
    return isinstance(factory, type)


def _values(twin: Any, tag: str) -> dict[str, Any]:
    """A distinct value for every field (records check no types)."""
    return {f.name: f"{tag}-{f.name}" for f in dataclasses.fields(twin)}


def _required(twin: Any) -> dict[str, Any]:
    return {
        f.name: f"x-{f.name}"
        for f in dataclasses.fields(twin)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }


def test_the_records_are_found_and_no_dataclass_is_left() -> None:
    """The walk finds the records (so the checks below run over them), and the board
    defines no dataclass: a record is declared one way."""
    names = set(IDS)
    assert {"core.model.Card", "core.model.CardDraft", "core.config.boardconfig.Config"} <= names
    assert len(RECORDS) >= 75
    for package in (board, core, tui):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            module = importlib.import_module(info.name)
            made = [
                name
                for name, value in vars(module).items()
                if isinstance(value, type)
                and dataclasses.is_dataclass(value)
                and value.__module__ == module.__name__
            ]
            assert made == [], f"{info.name}: dataclasses {made}; declare records (records.py)"


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_the_same_fields_and_constructor(record: type) -> None:
    twin = _twin(record)
    names = tuple(f.name for f in dataclasses.fields(twin))
    assert records.fields(record) == names == record.__match_args__ == twin.__match_args__
    if _slotted(record):
        assert tuple(vars(record)["__slots__"]) == names
        with pytest.raises(AttributeError):  # no instance dict, as with the twin's slots
            object.__setattr__(record(**_values(twin, "v")), "brand_new", 1)
    ours = list(inspect.signature(record).parameters.values())
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
    # (a hand-written __init__'s return annotation is the text 'None')
    assert (
        str(inspect.signature(record)).split(" -> ")[0]
        == str(inspect.signature(twin)).split(" -> ")[0]
    )


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_a_record_said_to_fill_its_dict_is_made_so(record: type) -> None:
    """`records.fills_dict`: a record so made (store/cardrow.py's listing) is the record
    its constructor makes, for every record it is said of; one with slots or its own
    `__init__` is never said to be."""
    values = _values(_twin(record), "v")
    if not records.fills_dict(record):
        assert _slotted(record) or _hand_written(record) or not record.__frozen__
        return
    assert not _slotted(record) and not _hand_written(record) and record.__frozen__
    made = object.__new__(record)
    made.__dict__.update(values)
    built = record(**values)
    assert vars(made) == vars(built) and made == built and repr(made) == repr(built)


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_the_same_defaults_each_made_afresh(record: type) -> None:
    twin = _twin(record)
    required = _required(twin)
    one, want, two = record(**required), twin(**required), record(**required)
    for f in dataclasses.fields(twin):
        got = getattr(one, f.name)
        assert type(got) is type(getattr(want, f.name)), f.name
        if f.default_factory is dataclasses.MISSING or _deterministic(f.default_factory):
            assert got == getattr(want, f.name), f.name
        if f.default_factory is not dataclasses.MISSING and type(got) in (list, dict, set):
            assert got is not getattr(two, f.name), f"{f.name}: one value shared by two records"
    if required:  # a required field left out is refused
        with pytest.raises(TypeError):
            record(**dict(list(required.items())[:-1]))
    with pytest.raises(TypeError):  # and one too many
        record(*range(len(dataclasses.fields(twin)) + 1))


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_the_same_repr_eq_and_hash(record: type) -> None:
    twin = _twin(record)
    values = _values(twin, "v")
    ours, theirs = record(**values), twin(**values)
    assert repr(ours) == repr(theirs).replace(twin.__qualname__, record.__qualname__, 1)
    assert ours == record(**values) and not (ours != record(**values))
    assert ours != theirs and ours.__eq__(theirs) is NotImplemented
    assert ours.__eq__(object()) is NotImplemented
    for name in values:  # every field counts, one at a time
        changed = {**values, name: f"w-{name}"}
        assert (ours == record(**changed)) is (theirs == twin(**changed)) is False, name
    if twin.__hash__ is None:
        assert record.__hash__ is None
        with pytest.raises(TypeError):
            hash(ours)
    else:
        assert hash(ours) == hash(theirs) == hash(record(**values))
        assert len({ours, record(**values)}) == 1


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_frozen_as_the_dataclass_is(record: type) -> None:
    twin = _twin(record)
    ours, theirs = record(**_values(twin, "v")), twin(**_values(twin, "v"))
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


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_replace_as_dict_and_fields_as_dataclasses_do(record: type) -> None:
    twin = _twin(record)
    values = _values(twin, "v")
    ours, theirs = record(**values), twin(**values)
    name = dataclasses.fields(twin)[-1].name
    got = records.replace(ours, **{name: "new"})
    want = dataclasses.replace(theirs, **{name: "new"})
    assert type(got) is record and records.as_dict(got) == dataclasses.asdict(want)
    assert records.as_dict(ours) == dataclasses.asdict(theirs) == values
    assert records.replace(ours) == ours and records.replace(ours) is not ours
    with pytest.raises(TypeError):
        records.replace(ours, no_such_field=1)


def test_real_records_too() -> None:
    """With real values: a card with a block, the default config (unhashable, as its
    dicts make the dataclass), a rule whose regex is cached on first use."""
    card_ = _twin(Card)
    card = Card(id="c-1", title="t", blocked=Blocked("held", "why"), labels=("a",))
    twin = card_(id="c-1", title="t", blocked=Blocked("held", "why"), labels=("a",))
    assert repr(card) == repr(twin).replace("Card_", "Card", 1)
    assert hash(card) == hash(twin)
    assert records.replace(card, lane="ready") == Card(**{**vars(card), "lane": "ready"})
    cfg = config.Config(root=Path("/r"))
    assert repr(cfg) == repr(_twin(config.Config)(root=Path("/r"))).replace("Config_", "Config", 1)
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
    assert hash(rule) == hash(_twin(Rule)(**records.as_dict(rule)))


# the base itself --------------------------------------------------------------------------


def test_a_record_is_declared_as_a_dataclass_is() -> None:
    """Fields with defaults, a factory, a field left out of repr, slots, a record that
    extends another: what `@dataclass` makes of the same class body."""

    class Note(Record, slots=True):
        title: str
        tags: list[str] = field(default_factory=list)
        weight: int = 1
        secret: str = field(default="", repr=False)

    class Pinned(Note):
        pinned_at: str = ""

    class Sealed(Frozen, slots=True):
        a: int

    class Stamped(Sealed):  # no slots of its own: its field in a dict, its base's in slots
        at: str = ""

    class Twin:
        title: str
        tags: list[str] = dataclasses.field(default_factory=list)
        weight: int = 1
        secret: str = dataclasses.field(default="", repr=False)

    twin = dataclasses.dataclass(slots=True)(Twin)
    note, want = Note("n", secret="s"), twin("n", secret="s")
    assert repr(note) == repr(want).replace(twin.__qualname__, Note.__qualname__)
    assert Note.__slots__ == ("title", "tags", "weight", "secret")
    assert str(inspect.signature(Note)) == str(inspect.signature(twin))
    assert note.tags == [] and note.tags is not Note("m").tags
    pinned = Pinned("p", ["a"], 2, "s", "now")
    assert records.fields(Pinned) == ("title", "tags", "weight", "secret", "pinned_at")
    assert pinned != Note("p", ["a"], 2, "s") and pinned.pinned_at == "now"
    assert "secret" not in repr(pinned) and "pinned_at='now'" in repr(pinned)
    stamped = Stamped(1, "now")
    assert (stamped.a, stamped.at) == (1, "now") and not records.fills_dict(Stamped)
    assert records.fills_dict(Card) and not records.fills_dict(Blocked)


def test_a_bad_declaration_is_refused_as_dataclasses_refuse_it() -> None:
    with pytest.raises(TypeError, match="non-default argument 'b' follows default"):

        class Late(Record):
            a: int = 0
            b: int

    class Loose(Record):
        a: int

    with pytest.raises(TypeError, match="frozen record cannot extend a mutable"):

        class Stiff(Loose, frozen=True):
            b: int = 0

    with pytest.raises(ValueError, match="both default and default_factory"):
        field(default=1, default_factory=list)
    with pytest.raises(TypeError, match="may not start with '__'"):

        class Mangled(Record):
            __odd__: int


def test_init_is_compiled_after_the_first_records_or_when_read() -> None:
    """A record's `__init__` is compiled once COMPILE_AFTER records of its class were made
    without it (a verb that makes a record once pays no compiling), or at once when it is
    read from the class (its signature); then put in its class, so making many cards runs
    a plain function."""

    class Lazy(Frozen):
        a: int
        b: tuple[int, ...] = ()

    first = Lazy(1)
    for n in range(2, records.COMPILE_AFTER + 1):
        assert isinstance(vars(Lazy)["__init__"], records.LazyInit), n
        assert Lazy(n).a == n
    assert isinstance(vars(Lazy)["__init__"], records.LazyInit)
    last = Lazy(0, (1,))
    made = vars(Lazy)["__init__"]
    assert inspect.isfunction(made) and made.__qualname__.endswith("Lazy.__init__")
    assert Lazy(2).b == () and vars(Lazy)["__init__"] is made and first == Lazy(1)
    assert last == Lazy(a=0, b=(1,))

    class Read(Record):
        a: int

    assert str(inspect.signature(Read)) == "(a: 'int') -> None"
    assert inspect.isfunction(vars(Read)["__init__"])


def _two_ways(record: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any]:
    """The record made by LazyInit.make (no compiling) and by the compiled __init__, from
    the same arguments: each a record or the TypeError it raised."""
    specs, frozen = record.__record_fields__, record.__frozen__
    in_dict = not any(vars(k).get("__slots__") for k in record.__mro__ if k is not object)
    lazy = records.LazyInit(
        record.__qualname__, record.__module__, specs, record.__record_annotations__,
        frozen, in_dict,
    )  # fmt: skip
    lazy.owner = type(record)(record.__name__, (record,), {})  # where a refusal compiles
    out = []
    ways = (lambda r: lazy.make(r, args, kwargs), lambda r: lazy.compiled()(r, *args, **kwargs))
    for way in ways:
        made = object.__new__(record)
        try:
            way(made)
        except TypeError as exc:
            out.append(str(exc))
        else:
            out.append(made)
    return out[0], out[1]


@pytest.mark.parametrize("record", RECORDS, ids=IDS)
def test_made_without_compiling_as_with_it(record: type) -> None:
    """LazyInit.make (the first records of a class) makes what the compiled `__init__`
    makes, from every shape of call: by name, by place, only the required, a factory's
    fresh value; and refuses what it refuses with the same words."""
    if _hand_written(record):
        return
    twin = _twin(record)
    values = _values(twin, "v")
    required = _required(twin)
    names = list(values)
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((), values),
        (tuple(values.values()), {}),
        ((), required),
        (tuple(values.values())[:1], dict(list(values.items())[1:])),
        ((), {**required, names[-1]: records.FACTORY}) if names else ((), {}),
        (tuple(values.values()) + ("extra",), {}),  # too many
        ((), {**values, "not_a_field": 1}),  # unknown
        (tuple(values.values())[:1], values),  # repeated
    ]
    if required:
        calls.append(((), dict(list(required.items())[:-1])))  # one missing
    for args, kwargs in calls:
        plain, compiled = _two_ways(record, args, kwargs)
        assert type(plain) is type(compiled), (args, kwargs, plain, compiled)
        if isinstance(plain, str):
            assert plain == compiled
            continue
        for f in dataclasses.fields(twin):
            mine, theirs = getattr(plain, f.name), getattr(compiled, f.name)
            assert type(mine) is type(theirs), f.name
            if f.default_factory is dataclasses.MISSING or _deterministic(f.default_factory):
                assert mine == theirs, f.name
            elif mine is not values.get(f.name):  # the clock's: made afresh, not equal
                continue
        if not _slotted(record) and hasattr(plain, "__dict__"):
            assert list(vars(plain)) == list(vars(compiled))


def test_records_import_nothing_heavy() -> None:
    """records.py and the model import neither dataclasses, inspect nor typing at run time
    (mypy reads them through typing.dataclass_transform, under TYPE_CHECKING)."""
    code = (
        "import json, sys\n"
        "from board.core import model\n"
        "card = model.Card(id='c-1', title='t')\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    res = python_child(["-c", code])
    assert res.returncode == 0, res.stderr
    loaded = set(json.loads(res.stdout))
    assert {"board.core.records", "board.core.model"} <= loaded
    assert not {"dataclasses", "inspect", "typing"} & loaded
