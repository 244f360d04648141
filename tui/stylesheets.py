"""A screen's own stylesheet, added to the app's as the screen first composes.

Its own module, importing nothing of the board's: the screens that use it (the stranded
browser, the diffs, the logs) are imported lazily from modules it must not depend on.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from textual.app import App


def add_stylesheet(app: App[Any], path: Path) -> None:
    """Add a screen's own stylesheet to the app's, once, as the screen composes: only that
    file is parsed. A CSS_PATH would have Textual parse every source again, in a new
    stylesheet, and restyle every screen, each time such a screen first opened.
    These files' rules name only their own screens' widgets (by id), so nothing drawn
    already needs restyling. The rules are as a CSS_PATH gives them: a user stylesheet
    read from the file's path, at the end of the sources."""
    where = str(path)
    if not app.stylesheet.has_source(where, ""):
        css = path.read_text(encoding="utf-8")
        app.stylesheet.add_source(css, read_from=(where, ""), is_default_css=False)
