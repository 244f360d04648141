"""Errors the operator sees as one line: every refusal names what it found."""

from __future__ import annotations


class BoardError(Exception):
    """A refusal or failure that is shown to the operator as one clear line."""

    exit_code = 1

    def line(self) -> str:
        """The one line the CLI prints and the TUI shows."""
        text = str(self) or self.__class__.__name__
        return " ".join(text.split("\n")[0:1]).strip()


class Refused(BoardError):
    """A verb was refused because the card or repository is not in a state that allows it."""


class NotFound(Refused):
    """An id, branch or file the operator named does not exist."""


class Conflict(Refused):
    """A compare-and-set write found something other than what it expected."""


class ConfigError(BoardError):
    """board.toml is missing, unreadable, or holds an unknown key or a bad value."""

    exit_code = 2


class StoreError(BoardError):
    """The store file is locked, read-only, corrupt or otherwise unusable."""


class StoreUnavailable(StoreError):
    """The store's server cannot be reached (down, restarting, the network cut): unlike a
    refused login or a locked row, the same call may work a moment later. `board run`
    waits it out for `[store] reconnect_s`; a verb says it in one line."""


class CorruptCard(StoreError):
    """A card's row holds a value the board cannot read (edited by hand, or a bad disk).

    The line names the card and the field, so the operator knows which row to mend, and
    a listing can show every other card instead of failing whole.
    """

    def __init__(self, card: str, field: str, why: str) -> None:
        self.card = card
        self.field = field
        super().__init__(f"card {card} cannot be read: its field {field} in the store {why}")


class GitError(BoardError):
    """A git command failed; the message carries git's own words."""


class StrandedWorkError(BoardError):
    """A tree holds work that could not be saved, so it was kept exactly as it is.

    The message names the path, what the tree holds, why saving failed, and both
    ways out (recover or discard), because the operator must act on it by hand.
    """

    def __init__(self, path: str, holds: str, why: str, base: str = "main") -> None:
        self.path = path
        self.holds = holds
        self.why = why
        super().__init__(
            f"{path} holds work that exists nowhere else ({holds}) and could not be saved: {why}. "
            f"The tree was kept as it is. Recover: cd {path} && git add -A && "
            f"git commit -m 'rescue' (then cherry-pick that commit onto {base}); or discard: "
            f"git worktree remove --force {path}"
        )

    def line(self) -> str:
        return str(self)
