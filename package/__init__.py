"""board: a headless engine that runs coding agents over a git repository, and its control room."""

__version__ = "0.1.0"
