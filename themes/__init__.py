"""Theme files shipped with board (TOML), loaded at start."""
