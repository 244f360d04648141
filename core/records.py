"""Plain records (the card, the config, a drive row ...) without `dataclasses`.

Every verb imports the model and the config, and `@dataclass` made each start pay for them
twice: importing `dataclasses` pulls in `inspect`, `ast` and `dis`, and each class's methods
were generated and compiled with `exec` at every start (some 40 ms of a ~150 ms
`board card list`). So each record writes its own `__init__` (its signature is what a
dataclass's was) and lists its fields once, in `__match_args__`, from which `Record` derives
`__repr__`, `__eq__` and `__hash__` as a dataclass does. tests/test_records.py builds the
equivalent `@dataclass` of every record and checks they behave the same.
"""

from __future__ import annotations

from operator import attrgetter

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from typing import Any, ClassVar, TypeVar

    R = TypeVar("R", bound="Record")


class _Factory:
    """The default of a field whose value is made afresh for each record (a dataclass's
    `field(default_factory=...)`); shown as a dataclass shows it in a signature."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<factory>"


FACTORY: Any = _Factory()


class Record:
    """Fields named in `__match_args__` (in order): repr, eq and hash over them, as a
    dataclass (eq=True) does. Subclasses write `__init__`."""

    __slots__ = ()
    __match_args__: ClassVar[tuple[str, ...]] = ()
    _values: ClassVar[attrgetter[Any]]  # a record's field values, as one tuple

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        names = cls.__dict__.get("__match_args__")
        if names is None:  # a base (Frozen): its subclasses name the fields
            return
        if len(names) < 2:  # attrgetter of one name gives the value, not a tuple
            raise TypeError(f"{cls.__name__}: a record needs two fields or more")
        cls._values = attrgetter(*names)

    def __repr__(self) -> str:
        values = self._values(self)
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(self.__match_args__, values, strict=True))
        return f"{self.__class__.__qualname__}({shown})"

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return bool(self._values(self) == self._values(other))
        return NotImplemented

    __hash__: Any = None  # a mutable record, as a dataclass with eq=True and frozen=False


class Frozen(Record):
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
    return record.__match_args__


def as_dict(record: Record) -> dict[str, Any]:
    """A record's fields and their values, as they are (not copied: `dataclasses.asdict`
    when every value is plain data, as in the records that use it)."""
    return dict(zip(record.__match_args__, record._values(record), strict=True))


def replace(record: R, **changes: Any) -> R:
    """A copy of `record` with some fields changed (`dataclasses.replace`): it goes through
    `__init__`, so an unknown field is refused with TypeError."""
    return record.__class__(**{**as_dict(record), **changes})
