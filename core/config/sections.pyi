# Generated from KEYS (core/config/keyschema.py) by scripts/gendocs.py: do not edit.
# The type checker's view of core/config/sections.py, whose classes are made at import.

from board.core.config.keyschema import Tier
from board.core.failures import Rule
from board.core.model import Price
from board.core.records import Frozen

RECORDS: dict[str, type[Frozen]]

class BoardSection(Frozen):
    base: str
    run_branch: str
    worktrees: str
    prefix: str
    max_concurrent: int
    loop_interval_s: float
    scratch: tuple[str, ...]
    host_lease_s: float
    self_heal_max: int
    def __init__(
        self,
        base: str = ...,
        run_branch: str = ...,
        worktrees: str = ...,
        prefix: str = ...,
        max_concurrent: int = ...,
        loop_interval_s: float = ...,
        scratch: tuple[str, ...] = ...,
        host_lease_s: float = ...,
        self_heal_max: int = ...,
    ) -> None: ...

class CoderSection(Frozen):
    ladder: tuple[str, ...]
    timeout_s: float
    first_output_timeout_s: float
    timeout_split_after: int
    best_of: int
    best_of_rule: str
    tiers: dict[str, Tier]
    def __init__(
        self,
        ladder: tuple[str, ...] = ...,
        timeout_s: float = ...,
        first_output_timeout_s: float = ...,
        timeout_split_after: int = ...,
        best_of: int = ...,
        best_of_rule: str = ...,
        tiers: dict[str, Tier] = ...,
    ) -> None: ...

class GateSection(Frozen):
    format_argv: tuple[str, ...]
    argv: tuple[str, ...]
    timeout_s: float
    retries: int
    def __init__(
        self,
        format_argv: tuple[str, ...] = ...,
        argv: tuple[str, ...] = ...,
        timeout_s: float = ...,
        retries: int = ...,
    ) -> None: ...

class PublishSection(Frozen):
    mode: str
    review: str
    remote: str
    pr_argv: tuple[str, ...]
    run_on_remote: bool
    timeout_s: float
    pr_state_argv: tuple[str, ...]
    poll_s: float
    auto_merge: bool
    merge_argv: tuple[str, ...]
    merge_method: str
    def __init__(
        self,
        mode: str = ...,
        review: str = ...,
        remote: str = ...,
        pr_argv: tuple[str, ...] = ...,
        run_on_remote: bool = ...,
        timeout_s: float = ...,
        pr_state_argv: tuple[str, ...] = ...,
        poll_s: float = ...,
        auto_merge: bool = ...,
        merge_argv: tuple[str, ...] = ...,
        merge_method: str = ...,
    ) -> None: ...

class TreeSection(Frozen):
    setup: tuple[tuple[str, ...], ...]
    copy: tuple[str, ...]
    setup_timeout_s: float
    def __init__(
        self,
        setup: tuple[tuple[str, ...], ...] = ...,
        copy: tuple[str, ...] = ...,
        setup_timeout_s: float = ...,
    ) -> None: ...

class PlannerSection(Frozen):
    name: str
    argv: tuple[str, ...]
    timeout_s: float
    def __init__(
        self,
        name: str = ...,
        argv: tuple[str, ...] = ...,
        timeout_s: float = ...,
    ) -> None: ...

class FailuresSection(Frozen):
    max_backoff_s: float
    rules: tuple[Rule, ...]
    def __init__(
        self,
        max_backoff_s: float = ...,
        rules: tuple[Rule, ...] = ...,
    ) -> None: ...

class TuiSection(Frozen):
    theme: str
    theme_dir: str
    keys: dict[str, str]
    notify: str
    def __init__(
        self,
        theme: str = ...,
        theme_dir: str = ...,
        keys: dict[str, str] = ...,
        notify: str = ...,
    ) -> None: ...

class NotifySection(Frozen):
    argv: tuple[str, ...]
    urls: tuple[str, ...]
    timeout_s: float
    def __init__(
        self,
        argv: tuple[str, ...] = ...,
        urls: tuple[str, ...] = ...,
        timeout_s: float = ...,
    ) -> None: ...

class WebSection(Frozen):
    max_sessions: int
    def __init__(
        self,
        max_sessions: int = ...,
    ) -> None: ...

class StoreSection(Frozen):
    url: str
    reconnect_s: float
    def __init__(
        self,
        url: str = ...,
        reconnect_s: float = ...,
    ) -> None: ...

class UsageSection(Frozen):
    prices: dict[str, Price]
    def __init__(
        self,
        prices: dict[str, Price] = ...,
    ) -> None: ...

class BudgetSection(Frozen):
    card_usd: float
    day_usd: float
    hard: bool
    def __init__(
        self,
        card_usd: float = ...,
        day_usd: float = ...,
        hard: bool = ...,
    ) -> None: ...

class ImportSection(Frozen):
    gh_argv: tuple[str, ...]
    on_done_argv: tuple[str, ...]
    timeout_s: float
    def __init__(
        self,
        gh_argv: tuple[str, ...] = ...,
        on_done_argv: tuple[str, ...] = ...,
        timeout_s: float = ...,
    ) -> None: ...
