"""The diagnosis in the HTML report, in headless Chromium: the category × (blessed, current,
new, regressed) table, the example table filtered and sorted by category, and model output in
a cluster pattern shown as text, never run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.diagnosis.test_diagnosis_run import _goldgate, _good, _predict, _project
from tests.report.browser import open_report

HOSTILE = "<img src=x onerror=alert(document.domain)> Sure"


def _output(index: int, row: dict[str, Any]) -> str:
    if index % 3 == 0:
        return ""
    if index % 3 == 1 and index < 30:
        # a word of its own, not a number (number_change would explain these)
        return f"{HOSTILE} {chr(97 + index % 26)}{chr(97 + index * 7 % 26)}x"
    return _good(index, row)


def test_categories_table_filter_and_sort(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, gate="{max_drop: 1.0}")
    # a sentence in place of a short answer is a real length drift (and drops the answer's
    # number): off, so that those outputs stay unexplained and are clustered
    config = root / "goldgate.yaml"
    config.write_text(config.read_text() + "diagnose: {disable: [length_drift, number_change]}\n")
    _predict(root, _good)
    assert _goldgate(root, monkeypatch, "bless") == 0
    _predict(root, _output)
    assert _goldgate(root, monkeypatch, "run") == 1
    w = open_report(browser, root / "goldgate-report" / "report.html")
    page = w.page
    assert w.errors == [] and w.dialogs == [] and w.foreign_requests() == []
    assert page.text_content("header p.why").startswith("why: 22 of 32 regressed examples")
    cells = page.eval_on_selector_all(
        "table.categories tbody tr", "rows => rows.map(r => [...r.cells].map(c => c.textContent))"
    )
    # every category, most regressed first; only empty was found
    assert cells[0] == ["empty", "0", "22", "22", "22"]
    assert len(cells) == 8 and all(row[1:] == ["0", "0", "0", "0"] for row in cells[1:])
    clusters = page.eval_on_selector_all("ul.clusters li", "items => items.map(i => i.textContent)")
    assert clusters and clusters[0].startswith(f"10 now begin with '{HOSTILE.split()[0]}")
    assert page.locator("ul.clusters img").count() == 0  # shown as text
    assert page.text_content("#gg-count").startswith("66 of 66 examples")
    page.select_option("select[name=category]", label="empty")
    assert page.text_content("#gg-count").startswith("22 of 66 examples")
    page.check("input[name=newcat]")
    assert page.text_content("#gg-count").startswith("22 of 66 examples")
    page.select_option("select[name=category]", label="all")
    page.uncheck("input[name=newcat]")
    page.click("th button[data-sort=category]")
    last = page.eval_on_selector_all(
        "#gg-rows tr:not(.detail)", "rows => rows.map(r => r.cells[r.cells.length - 1].textContent)"
    )
    assert last[:22] == ["empty (new)"] * 22 and set(last[22:]) == {""}
