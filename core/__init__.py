"""Headless engine: model, store, config, git, worktrees, drive, loop, actions, CLI."""
