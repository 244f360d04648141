"""Config: the parsed board.toml, as the repository's root and one record per section."""

from __future__ import annotations

from pathlib import Path

from board.core import cachedir
from board.core.config.keyschema import BOARD_DIR
from board.core.config.sections import RECORDS
from board.core.records import Frozen, field

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a quick verb's start)
if TYPE_CHECKING:
    from board.core.config.sections import (
        BoardSection,
        BudgetSection,
        CoderSection,
        FailuresSection,
        GateSection,
        ImportSection,
        NotifySection,
        PlannerSection,
        PublishSection,
        StoreSection,
        TreeSection,
        TuiSection,
        UsageSection,
        WebSection,
    )


class Config(Frozen, slots=True):
    """The parsed board.toml with every default filled in: `cfg.gate.argv` is [gate] argv.
    Its fields are the root and the sections of KEYS, in order (tests/test_config.py)."""

    root: Path
    board: BoardSection = field(default_factory=RECORDS["board"])
    coder: CoderSection = field(default_factory=RECORDS["coder"])
    gate: GateSection = field(default_factory=RECORDS["gate"])
    publish: PublishSection = field(default_factory=RECORDS["publish"])
    tree: TreeSection = field(default_factory=RECORDS["tree"])
    planner: PlannerSection = field(default_factory=RECORDS["planner"])
    failures: FailuresSection = field(default_factory=RECORDS["failures"])
    tui: TuiSection = field(default_factory=RECORDS["tui"])
    notify: NotifySection = field(default_factory=RECORDS["notify"])
    web: WebSection = field(default_factory=RECORDS["web"])
    store: StoreSection = field(default_factory=RECORDS["store"])
    usage: UsageSection = field(default_factory=RECORDS["usage"])
    budget: BudgetSection = field(default_factory=RECORDS["budget"])
    import_: ImportSection = field(default_factory=RECORDS["import"])  # [import]: a keyword

    @property
    def board_dir(self) -> Path:
        return self.root / BOARD_DIR

    @property
    def cache_folder(self) -> cachedir.Folder | None:
        """This repository's folder in the user's cache directory (never in `.board/`: a
        clone brings what its repository committed there); None when caching is off."""
        return cachedir.for_repo(self.root)

    @property
    def db_path(self) -> Path:
        return self.board_dir / "board.db"

    @property
    def logs_dir(self) -> Path:
        return self.board_dir / "logs"

    @property
    def worktrees_dir(self) -> Path:
        return (self.root / self.board.worktrees).resolve()

    def rel(self, path: str | Path) -> str:
        """`path` relative to the repository root when it lies inside it, else as given:
        what logs, comments and drive rows show (short, and the same on every machine)."""
        try:
            return str(Path(path).relative_to(self.root))
        except ValueError:
            return str(path)
