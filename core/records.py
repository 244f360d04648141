"""The board's one way to declare a record (a card, a drive row, a fold's outcome ...).

A record is declared as a dataclass is, its fields written once as annotated class
attributes with their defaults:

    class Card(Frozen):
        id: str
        title: str
        labels: tuple[str, ...] = ()
        notes: list[str] = field(default_factory=list)

and gets what `@dataclass` (eq=True) would give it: `__init__` with those parameters in
that order (a fresh value from the factory for each record), `__repr__`, `__eq__` over the
fields, `__match_args__`; `__hash__` over the fields when frozen (assigning or deleting a
field then raises AttributeError), none when not. `slots=True` gives it `__slots__` of its
fields. A class that writes its own `__init__` or `__slots__` keeps them, as with
`@dataclass`.

Why not `@dataclass`: every verb imports the model, and `import dataclasses` pulls in
`inspect`, `ast` and `dis`, then compiles four methods per class with `exec` at each start
(some 40 ms of a ~150 ms `board card list` once). Here nothing is imported at run time;
only `__init__` is compiled, once per class and only when first used (a verb defines many
records and makes few), so that making 10,000 cards is as quick as with a hand-written
`__init__` (tests/bench/bench_records.py); repr, eq and hash are the base's, reading the
fields through one `attrgetter`. mypy reads a record as a dataclass through
`typing.dataclass_transform`. tests/test_records.py checks every record against a
`dataclasses.make_dataclass` twin made from the same fields.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any, ClassVar, TypeVar, dataclass_transform

    R = TypeVar("R", bound="Record")
else:

    def dataclass_transform(**_: object) -> object:
        """typing.dataclass_transform for mypy; at run time it marks nothing."""
        return lambda cls: cls


class _Factory:
    """The default of a field whose value is made afresh for each record (a dataclass's
    `field(default_factory=...)`); shown as a dataclass shows it in a signature."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()
_MISSING: Any = object()  # a field with no default


class Field:
    """What `field()` declares about one field beyond its type (`dataclasses.Field`)."""

    __slots__ = ("default", "default_factory", "repr")

    def __init__(self, default: Any, default_factory: Any, repr: bool) -> None:
        self.default = default
        self.default_factory = default_factory
        self.repr = repr


def field(
    *,
    default: Any = _MISSING,
    default_factory: Callable[[], Any] | None = None,
    repr: bool = True,
) -> Any:
    """A field's default made afresh for each record by `default_factory` (a list, a dict),
    or a field left out of repr (`dataclasses.field`, those arguments only)."""
    if default is not _MISSING and default_factory is not None:
        raise ValueError("cannot specify both default and default_factory")
    return Field(default, default_factory, repr)


def _is_classvar(annotation: Any) -> bool:
    """Whether an annotation makes a class variable, not a field (as dataclasses reads a
    string annotation: by its spelling)."""
    if type(annotation) is not str:
        annotation = repr(annotation)
    return annotation[:8] == "ClassVar" or annotation[:15] == "typing.ClassVar"


def _getter(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The fields' values of a record as one tuple (attrgetter of one name gives the value)."""
    if len(names) >= 2:
        return attrgetter(*names)
    if names:  # a plain function would be bound as a method: a staticmethod is not
        one = attrgetter(names[0])
        return staticmethod(lambda record: (one(record),))
    return staticmethod(lambda record: ())


_LITERALS: dict[Any, str] = {list: "[]", dict: "{}"}


def _make_init(
    qualname: str,
    module: str,
    specs: dict[str, Field],
    annotations: dict[str, Any],
    frozen: bool,
    instance_dict: bool,
) -> Callable[..., None]:
    """`__init__` for these fields, compiled once (as dataclasses does): a hand-written
    `__init__`'s speed, a dataclass's signature. A frozen record without slots fills its
    instance dict directly (no `object.__setattr__` call per field)."""
    params, body = [], []
    scope: dict[str, Any] = {"__FACTORY": FACTORY, "__set": object.__setattr__}
    for name, spec in specs.items():
        if spec.default_factory is not None:
            made = _LITERALS.get(spec.default_factory)  # `[]` builds a list faster than list()
            if made is None:
                scope[f"__f_{name}"] = spec.default_factory
                made = f"__f_{name}()"
            params.append(f"{name}=__FACTORY")
            value = f"{made} if {name} is __FACTORY else {name}"
        elif spec.default is not _MISSING:
            scope[f"__d_{name}"] = spec.default
            params.append(f"{name}=__d_{name}")
            value = name
        else:
            params.append(name)
            value = name
        if not frozen:
            body.append(f"  self.{name} = {value}")
        elif instance_dict:
            body.append(f"  __d[{name!r}] = {value}")
        else:
            body.append(f"  __set(self, {name!r}, {value})")
    if frozen and instance_dict and specs:
        body.insert(0, "  __d = self.__dict__")
    source = f"def __init__(self, {', '.join(params)}):\n" + ("\n".join(body) or "  pass")
    # the source is made above from the fields' names (identifiers) only; its own names
    # start with two underscores, which no field's does
    exec(compile(source, f"<record {module}.{qualname}>", "exec"), scope)
    init: Any = scope["__init__"]
    init.__qualname__ = f"{qualname}.__init__"
    init.__module__ = module
    init.__annotations__ = {**{n: annotations[n] for n in specs}, "return": None}
    return init


COMPILE_AFTER = 32  # records of a class made without compiling its __init__, before it is


class LazyInit:
    """A record's `__init__` until it is compiled: the first COMPILE_AFTER records of a
    class are made by `make` (the fields bound and set one by one, no compiling), then
    `__init__` is compiled and put in the class in its place, or at once when it is read
    from the class (its signature). Why: a quick verb defines some thirty records and makes
    most of them once (a config section, a rule); compiling each one's `__init__`
    (0.05-0.3 ms) was 3.6 of the 18 ms `board card list` spends in Python
    (tests/bench/bench_tricks.py), while a listing of 10,000 cards still makes them with the
    compiled one. tests/test_records.py holds `make` equal to the compiled `__init__`."""

    __slots__ = ("args", "made", "names", "owner")

    def __init__(
        self,
        qualname: str,
        module: str,
        specs: dict[str, Field],
        annotations: dict[str, Any],
        frozen: bool,
        instance_dict: bool,
    ) -> None:
        self.args = (qualname, module, specs, annotations, frozen, instance_dict)
        self.names = tuple(specs)
        self.made = 0
        self.owner: type | None = None

    def compiled(self) -> Callable[..., None]:
        """The compiled `__init__`, put in the record's class (not a subclass's)."""
        init = _make_init(*self.args)
        type.__setattr__(self.owner, "__init__", init)
        return init

    def __get__(self, instance: Any, owner: type | None = None) -> Any:
        if instance is None or self.made >= COMPILE_AFTER:
            init = self.compiled()
            return init if instance is None else init.__get__(instance, owner)
        self.made += 1
        return lambda *args, **kwargs: self.make(instance, args, kwargs)

    def make(self, record: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """Fill `record` as the compiled `__init__` would. Any call it would refuse (too
        many arguments, an unknown or repeated one, a missing one) goes to the compiled
        `__init__`, so the TypeError is Python's own."""
        names = self.names
        specs = self.args[2]
        if len(args) > len(names):
            return self.compiled()(record, *args, **kwargs)
        values = dict(zip(names, args, strict=False))
        for name in kwargs:
            if name in values or name not in specs:
                return self.compiled()(record, *args, **kwargs)
        values.update(kwargs)
        for name in names[len(args) :]:
            spec = specs[name]
            value = values.get(name, _MISSING)
            if spec.default_factory is not None:
                if value is _MISSING or value is FACTORY:
                    values[name] = spec.default_factory()
            elif value is _MISSING:
                if spec.default is _MISSING:
                    return self.compiled()(record, *args, **kwargs)
                values[name] = spec.default
        for name in names[: len(args)]:  # FACTORY given by place: a fresh value, as there
            if values[name] is FACTORY and specs[name].default_factory is not None:
                values[name] = specs[name].default_factory()
        frozen, instance_dict = self.args[4], self.args[5]
        if not frozen:
            for name in names:
                setattr(record, name, values[name])
        elif instance_dict:
            record.__dict__.update({name: values[name] for name in names})
        else:
            for name in names:
                object.__setattr__(record, name, values[name])
        return None


class _RecordType(type):
    """Makes a record's class from its declared fields (see the module's docstring).
    A metaclass, since `__slots__` must be in the namespace before the class is made."""

    def __new__(
        mcls,
        name: str,
        bases: tuple[type, ...],
        ns: dict[str, Any],
        *,
        frozen: bool = False,
        slots: bool = False,
        **kwargs: Any,
    ) -> _RecordType:
        parents = [b for b in bases if isinstance(b, _RecordType)]
        frozen = frozen or any(b.__frozen__ for b in parents)
        specs: dict[str, Field] = {}
        annotations: dict[str, Any] = {}
        for base in reversed(parents):  # fields of a record it extends come first
            specs.update(base.__record_fields__)
            annotations.update(base.__record_annotations__)
        own = ns.get("__annotations__", {})
        defaulted = ""  # the last field with a default
        for fname, annotation in own.items():
            if _is_classvar(annotation):
                continue
            if fname[:2] == "__":  # __init__'s own names start so (_make_init)
                raise TypeError(f"{name}: a field's name may not start with '__': {fname}")
            value = ns.get(fname, _MISSING)
            if type(value) is Field:  # as dataclasses: the class keeps a plain default
                spec = value
                if value.default is _MISSING:
                    del ns[fname]
                else:
                    ns[fname] = value.default
            else:
                spec = Field(value, None, True)
            specs[fname] = spec
            annotations[fname] = annotation
        for fname, spec in specs.items():
            if spec.default is not _MISSING or spec.default_factory is not None:
                defaulted = fname
            elif defaulted:
                raise TypeError(f"{name}: non-default argument {fname!r} follows default argument")
        if frozen and not all(b.__frozen__ for b in parents if b.__record_fields__):
            raise TypeError(f"{name}: a frozen record cannot extend a mutable one")
        names = tuple(specs)
        if slots and "__slots__" not in ns:
            ns["__slots__"] = tuple(n for n in own if n in specs)
            for fname in ns["__slots__"]:
                ns.pop(fname, None)  # a default would clash with the slot's descriptor
        ns.setdefault("__match_args__", names)
        # whether each field lives in the instance dict (no slots here or in a base)
        in_dict = "__slots__" not in ns and not any(
            vars(k).get("__slots__") for b in bases for k in b.__mro__
        )
        init = None
        if "__init__" not in ns and (names or not parents):
            init = ns["__init__"] = LazyInit(
                ns.get("__qualname__", name), ns.get("__module__", ""), specs, annotations,
                frozen, in_dict,
            )  # fmt: skip
        if "__hash__" not in ns:
            ns["__hash__"] = _frozen_hash if frozen else None
        # set before the class is made: each attribute set on a class after costs more
        ns["__frozen__"] = frozen
        # what making one is: filling its instance dict, and nothing else (fills_dict)
        ns["__fills_dict__"] = frozen and init is not None and in_dict
        ns["__record_fields__"] = specs
        ns["__record_annotations__"] = annotations
        ns["_values"] = _getter(names)
        shown = tuple(n for n, s in specs.items() if s.repr)
        ns["_shown"] = shown
        ns["_shown_values"] = ns["_values"] if shown == names else _getter(shown)
        cls = super().__new__(mcls, name, bases, ns, **kwargs)
        if init is not None:
            init.owner = cls
        return cls

    __frozen__: bool
    __fills_dict__: bool
    __record_fields__: dict[str, Field]
    __record_annotations__: dict[str, Any]
    _values: Callable[..., tuple[Any, ...]]
    _shown: tuple[str, ...]
    _shown_values: Callable[..., tuple[Any, ...]]


def _frozen_hash(self: Any) -> int:
    return hash(self._values(self))


@dataclass_transform(field_specifiers=(field,))
class Record(metaclass=_RecordType):
    """A mutable record (`@dataclass`); `Frozen` for one nobody may change (`frozen=True`),
    `class X(Record, slots=True)` for `__slots__`."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    # the fields' values as one tuple, given the record (not a method: an attrgetter)
    _values: ClassVar[Callable[..., tuple[Any, ...]]]
    _shown: ClassVar[tuple[str, ...]]  # the fields repr shows
    _shown_values: ClassVar[Callable[..., tuple[Any, ...]]]

    def __repr__(self) -> str:
        values = self._shown_values(self)
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self._shown, values, strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == self._values(other))
        return NotImplemented

    # no __hash__ here: the class is made with None (a mutable dataclass is unhashable)


@dataclass_transform(field_specifiers=(field,), frozen_default=True)
class Frozen(Record, frozen=True):
    """A record nobody may change once made: assigning or deleting a field raises
    AttributeError, and it hashes by its fields (a frozen dataclass)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __hash__(self) -> int:
        return hash(self._values(self))


def fields(record: Record | type[Record]) -> tuple[str, ...]:
    """A record's field names, in order (`dataclasses.fields`, names only)."""
    cls = record if isinstance(record, type) else type(record)
    return tuple(cls.__record_fields__)


def fills_dict(cls: type[Record]) -> bool:
    """Whether making a record of `cls` only fills its instance dict with the fields'
    values: a frozen record without slots whose `__init__` is made here. Then
    `object.__new__(cls)` and one `__dict__.update(fields)` make the same record without
    a call per record (a listing makes thousands of cards), and without compiling
    `__init__` at all (tests/test_records.py checks the two agree)."""
    return cls.__fills_dict__


def as_dict(record: Record) -> dict[str, Any]:
    """A record's fields and their values, as they are (not copied: `dataclasses.asdict`
    when every value is plain data, as in the records that use it)."""
    return dict(zip(fields(record), record._values(record), strict=True))


def replace(record: R, **changes: Any) -> R:
    """A copy of `record` with some fields changed (`dataclasses.replace`): it goes through
    `__init__`, so an unknown field is refused with TypeError."""
    return record.__class__(**{**as_dict(record), **changes})
