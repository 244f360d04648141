"""What each step mixin of a `Drive` (its tree, back-off, and commit-and-publish steps) uses
of the drive itself, declared once: the drive's attributes, and its methods for the type
checker only, so each mixin is checked against the drive it is mixed into."""

from __future__ import annotations

from typing import TYPE_CHECKING, NoReturn

from board.core.config import Config
from board.core.store import Store

if TYPE_CHECKING:
    from board.core.model import Card


class DriveSteps:
    """The drive's own attributes and methods that its step mixins use."""

    cfg: Config
    store: Store
    card_id: str
    token: str
    attempt: int

    if TYPE_CHECKING:  # the drive's own, declared here so the steps are checked against them

        @property
        def tier(self) -> str: ...
        def _edge_check(self, edge: str) -> Card: ...
        def _block(
            self, cls: str, reason: str, tail: str = "", remove_tree: bool = True
        ) -> NoReturn: ...
        def _stand_aside(self, edge: str, found: str) -> NoReturn: ...
        def _comment(self, text: str, tail: str = "") -> None: ...
        def _say(self, text: str) -> None: ...
        def _end_row(self, status: str, result: str, token: str = "") -> None: ...
        def _remove_tree(self, why: str, replayed: tuple[str, str] | None = None) -> list[str]: ...
