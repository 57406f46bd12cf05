"""Headless Chromium for the HTML report tests, through Playwright without its own browsers.

Chromium comes from Debian (``/usr/bin/chromium``; ``./dev test`` installs it). Without it
the browser tests skip, unless ``GOLDGATE_REQUIRE_BROWSER=1`` (set in CI) makes them fail.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path(os.environ.get("GOLDGATE_CHROMIUM", "/usr/bin/chromium"))
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--no-first-run",
    "--disable-component-update",
    "--disable-sync",
]
#: where screenshots go: GOLDGATE_SCREENSHOT_DIR, else test-artifacts/screenshots in the
#: repository (git-ignored; the tests workflow uploads test-artifacts/ as an artifact)
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"
SHOT_DIR = os.environ.get("GOLDGATE_SCREENSHOT_DIR") or str(ARTIFACTS / "screenshots")


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install -e '.[test]')"
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is absent (apt-get install chromium)"
    return None


def require_browser() -> None:
    """Skip, or fail when GOLDGATE_REQUIRE_BROWSER=1, if the browser cannot run."""
    reason = _unavailable()
    if reason is None:
        return
    if os.environ.get("GOLDGATE_REQUIRE_BROWSER") == "1":
        pytest.fail(f"GOLDGATE_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@dataclass
class Watched:
    """A page with everything it tried to do recorded."""

    page: Any
    url: str
    console: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)
    dialogs: list[str] = field(default_factory=list)

    def foreign_requests(self) -> list[str]:
        return [r for r in self.requests if r != self.url]


def open_report(
    browser: Any, path: Path, *, width: int = 1366, height: int = 900, fragment: str = ""
) -> Watched:
    """Open a report file (at ``#fragment``), recording what the page tries to do."""
    context = browser.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    watched = Watched(page=page, url=path.resolve().as_uri())
    page.on("console", lambda m: watched.console.append(f"{m.type}: {m.text}"))
    page.on("pageerror", lambda e: watched.errors.append(str(e)))
    page.on("request", lambda r: watched.requests.append(r.url))

    def on_dialog(dialog: Any) -> None:
        watched.dialogs.append(f"{dialog.type}: {dialog.message}")
        dialog.dismiss()

    page.on("dialog", on_dialog)
    page.goto(watched.url + (f"#{fragment}" if fragment else ""))
    page.wait_for_selector("html[data-ready=true]", timeout=30_000)
    return watched


def screenshot_path(tmp_path: Path, name: str) -> Path:
    """Where to save a screenshot: GOLDGATE_SCREENSHOT_DIR if set, else test-artifacts/."""
    directory = Path(SHOT_DIR) if SHOT_DIR else tmp_path
    directory.mkdir(parents=True, exist_ok=True)
    return directory / name
