"""board: a headless engine that runs coding agents over a git repository, and its control room.

The import package is laid out as the source tree:

    board/          board         the command line (board.cli) and the demo (board.demo)
    core/           board.core    the headless engine; imports neither the TUI nor the CLI
    tui/            board.tui     the Textual control room; imports core, never the CLI
    themes/         board.themes  theme files (TOML)

Layers, top to bottom: board.cli and board.demo, then board.tui, then board.core (whose own
layers are drawn in docs/architecture.md). pyproject.toml's import-linter contracts hold
the tree to them, and the test suite runs them.
"""

__version__ = "0.1.0"
