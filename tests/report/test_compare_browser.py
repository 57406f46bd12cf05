"""The comparison page in headless Chromium: it opens, loads nothing, runs nothing, shows the
heat map, and the pair selector shows the chosen pair's examples with hostile text as text."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from tests.commands.compare_project import build
from tests.report.browser import open_report, screenshot_path


def test_comparison_page_in_chromium(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    build(tmp_path, hostile=True)
    label = "x<b>y</b>"  # a system label from the command line is text too
    # NAME=TARGET: the configured system c under an unsafe name
    assert main(["compare", "a", "b", f"{label}=c", "--out", "cmp", "-q"]) == 0
    page_path = tmp_path / "cmp" / "compare.html"
    html = page_path.read_text()
    assert "<script>alert" not in html and "<img src=x" not in html
    assert "\u202e" not in html  # shown escaped, as on the terminal
    assert "x&lt;b&gt;y&lt;/b&gt;" in html and label not in html
    markdown = (tmp_path / "cmp" / "compare.md").read_text()
    assert f"`{label}`" in markdown  # in a code span: text, not HTML
    assert markdown.count(label) == markdown.count(f"`{label}`")

    watched = open_report(browser, page_path, width=1280, height=900)
    page = watched.page
    assert watched.errors == [] and watched.console == [] and watched.dialogs == []
    assert watched.foreign_requests() == []
    assert page.locator("script").count() == 0
    assert page.text_content("h1") == "goldgate comparison"
    # two suites of two metrics: four sections, each a 3 × 3 heat map
    assert page.locator("section.metric").count() == 4
    heat = page.locator("section.metric").first.locator("table.heat")
    assert heat.locator("tbody tr").count() == 3
    assert heat.locator("td.cell").count() == 6
    assert heat.locator("td.self").count() == 3
    assert heat.locator("td.h-worse-1, td.h-worse-2, td.h-worse-3").count() >= 1
    assert page.locator("section.metric").first.locator("table.pairs tbody tr").count() == 3

    # the first pair's examples show until another is chosen
    first = page.locator("#m0 .pairs-examples > .pair").first
    assert first.is_visible()
    page.click("#m0 nav.pair-select a >> nth=1")  # a vs c
    chosen = page.locator("#m0-p1")
    assert chosen.is_visible() and not first.is_visible()
    texts = chosen.locator("pre.text").all_text_contents()
    assert any("<img src=x onerror=alert(1)>" in text for text in texts)  # as text
    assert any("\\u202e" in text for text in texts)
    assert page.locator("img").count() == 0
    shot = screenshot_path(tmp_path, f"compare-page-{os.getpid()}.png")
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000
