"""The history page in headless Chromium: it renders, hovers show commits, it loads nothing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.history.page_project import HOSTILE, build
from tests.report.browser import SHOT_DIR, open_report

#: screenshots are kept here (git-ignored) unless GOLDGATE_SCREENSHOT_DIR says otherwise
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"


def test_history_page_in_chromium(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    page_path = build(tmp_path, monkeypatch)
    watched = open_report(browser, page_path, width=1200, height=900)
    page = watched.page
    assert watched.errors == [] and watched.console == [] and watched.dialogs == []
    assert watched.foreign_requests() == []
    assert page.text_content("h1") == "goldgate history"
    # one metric's chart first, then the failure mode the diagnosis counted in some runs
    metrics = page.locator('section.trend:not([data-metric^="category:"])')
    assert metrics.locator("svg.trend").count() == 1
    assert page.locator('section.trend[data-metric="category:number_change"]').count() == 1
    assert page.locator("section.trend").first.get_attribute("data-metric") == "exact_match"
    assert metrics.locator("g.hit.run").count() == 7
    assert metrics.locator("g.hit.bless").count() == 3
    # the chart is drawn where it should be: inside the viewBox, the band behind the line
    box = metrics.locator("svg.trend").bounding_box()
    assert box is not None and box["width"] > 600 and box["height"] > 150
    ring = page.locator("circle.fail")
    assert ring.count() == 1
    # hovering a point: its title names the commit and its message (hostile text stays text)
    titles = page.eval_on_selector_all("g.hit > title", "ts => ts.map(t => t.textContent)")
    assert any(HOSTILE in t and "commit " in t for t in titles)
    assert any("gate: fail" in t and "score 75.00" in t for t in titles)
    ring.hover()
    assert page.locator("script").count() == 0
    assert page.locator("table.flaky tbody tr").count() >= 2
    directory = Path(SHOT_DIR) if SHOT_DIR else ARTIFACTS
    directory.mkdir(parents=True, exist_ok=True)
    shot = directory / f"history-page-{os.getpid()}.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
