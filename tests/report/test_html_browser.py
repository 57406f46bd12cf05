"""The HTML report in headless Chromium: it works, it is inert, it stays responsive."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest

from goldgate.report import render
from goldgate.result import RunResult
from tests.report.browser import open_report, screenshot_path
from tests.report.fixtures import hostile_result, large_result, make_result


def _write(tmp_path: Path, result: RunResult, name: str = "report.html") -> Path:
    path = tmp_path / name
    path.write_text(render(result, "html"), encoding="utf-8")
    return path


def _cells(page: Any, column: int) -> list[str]:
    return page.eval_on_selector_all(
        "#gg-rows tr:not(.detail)", f"rows => rows.map(r => r.cells[{column}].textContent)"
    )


def _number(text: str) -> float | None:
    return None if text == "\u2014" else float(text.replace("\u2212", "-"))


def test_renders_without_errors_and_looks_right(browser: Any, tmp_path: Path) -> None:
    result = make_result("regressed", n_examples=40)
    w = open_report(browser, _write(tmp_path, result))
    page = w.page
    assert w.errors == [] and [c for c in w.console if c.startswith("error")] == []
    assert w.foreign_requests() == []
    assert page.text_content("h1") == "goldgate: regressed"
    assert page.locator("svg.forest").count() == 3
    assert page.locator("svg.histogram").count() == 7
    assert page.text_content("#gg-count").startswith("120 of 120 examples")
    assert page.locator("#gg-rows tr").count() == 50  # one page
    # Expand the worst example: its diff shows deletions and insertions.
    page.click("#gg-rows tr:first-child button[data-toggle]")
    detail = page.locator("#gg-rows tr.detail")
    assert detail.count() == 1
    assert detail.locator("pre.diff del, pre.diff ins").count() > 0
    page.screenshot(path=str(screenshot_path(tmp_path, "report-regressed.png")), full_page=True)
    page.emulate_media(media="print")
    page.screenshot(path=str(screenshot_path(tmp_path, "report-print.png")), full_page=True)
    assert page.locator("#gg-controls").is_hidden()
    page.pdf(path=str(screenshot_path(tmp_path, "report.pdf")))  # printing does not break


def test_sorting(browser: Any, tmp_path: Path) -> None:
    page = open_report(browser, _write(tmp_path, make_result("regressed", n_examples=20))).page
    deltas = [_number(t) for t in _cells(page, 6)]
    present = [d for d in deltas if d is not None]
    assert present == sorted(present) and present[0] < 0  # worst first by default
    page.click("th button[data-sort=delta]")
    present = [d for d in (_number(t) for t in _cells(page, 6)) if d is not None]
    assert present == sorted(present, reverse=True)
    assert page.get_attribute("#gg-table th:nth-child(7)", "aria-sort") == "descending"
    page.click("th button[data-sort=id]")
    ids = [t.lstrip("\u25b8\u25be ").removesuffix("new") for t in _cells(page, 1)]
    assert ids == sorted(ids)
    page.click("th button[data-sort=current]")
    current = [d for d in (_number(t) for t in _cells(page, 5)) if d is not None]
    assert current == sorted(current)


def test_filtering(browser: Any, tmp_path: Path) -> None:
    result = make_result("regressed", n_examples=20)
    page = open_report(browser, _write(tmp_path, result)).page
    page.select_option("select[name=suite]", label="translate")
    assert set(_cells(page, 0)) == {"translate"}
    assert page.text_content("#gg-count").startswith("20 of 60")
    page.select_option("select[name=suite]", label="all")
    page.select_option("select[name=tag]", label="medical")
    expected = sum("medical" in ex.tags for s in result.suites for ex in s.examples)
    assert page.text_content("#gg-count").startswith(f"{expected} of 60")
    page.select_option("select[name=tag]", label="all")
    page.select_option("select[name=metric]", label="token_f1")
    assert set(_cells(page, 3)) == {"token_f1"}
    page.check("input[name=regressed]")
    deltas = [_number(t) for t in _cells(page, 6)]
    regressed_f1 = [
        ex
        for ex in result.suites[0].examples
        if "token_f1" in ex.baseline_scores
        and round(ex.scores["token_f1"] - ex.baseline_scores["token_f1"], 2) < 0
    ]
    assert len(deltas) == len(regressed_f1) and all(d is not None and d < 0 for d in deltas)
    page.select_option("select[name=metric]", label="worst gated")
    page.fill("input[name=q]", "qa-00")
    assert all(t.lstrip("\u25b8 ").startswith("qa-00") for t in _cells(page, 1))


@pytest.mark.parametrize("policy", [True, False], ids=["with-csp", "escaping-alone"])
def test_hostile_text_executes_and_loads_nothing(
    browser: Any, tmp_path: Path, policy: bool
) -> None:
    path = _write(tmp_path, hostile_result())
    if not policy:
        # The Content-Security-Policy would block what escaping missed; without it the
        # escaping alone must keep the page inert.
        html = path.read_text(encoding="utf-8")
        html, n = re.subn(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", html)
        assert n == 1
        path.write_text(html, encoding="utf-8")
    w = open_report(browser, path)
    page = w.page
    page.select_option("select[name=suite]", label="qa")
    for button in page.locator("#gg-rows button[data-toggle]").all():
        button.click()  # expand every row: references, outputs and diffs are in the page now
    for details in page.locator("details").all():
        details.evaluate("d => d.open = true")
    page.wait_for_timeout(300)  # give any onerror/onload a chance to fire
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert w.dialogs == []
    assert w.foreign_requests() == []
    assert w.errors == []
    assert page.locator("img, iframe, textarea, object, embed").count() == 0
    assert page.locator("a[href^='javascript']").count() == 0
    assert page.locator("script").count() == 2
    text = page.text_content("#gg-rows")
    assert "<script>window.__pwned = 1; alert('x')</script>" in text
    assert "![tracker](https://evil.example/t.png)" in text
    page.screenshot(path=str(screenshot_path(tmp_path, f"report-hostile-{policy}.png")))


def test_ten_thousand_examples_stay_responsive(
    browser: Any, tmp_path: Path, record_property: Any
) -> None:
    result = large_result(10_000)
    start = time.perf_counter()
    markdown = render(result, "md")
    md_s = time.perf_counter() - start
    start = time.perf_counter()
    html = render(result, "html")
    render_s = time.perf_counter() - start
    path = tmp_path / "large.html"
    path.write_text(html, encoding="utf-8")
    size = path.stat().st_size
    start = time.perf_counter()
    w = open_report(browser, path)
    load_s = time.perf_counter() - start
    page = w.page
    assert page.text_content("#gg-count").startswith("10,000 of 10,000")
    assert page.locator("#gg-rows tr").count() == 50
    # Each action's handler runs synchronously, so timing it inside the page measures the
    # script's own work (filtering, sorting and building the visible page of rows).
    timed = """([selector, value]) => {
        const node = document.querySelector(selector);
        const start = performance.now();
        if (value === null) node.click();
        else {
            if (node.type === "checkbox") node.checked = value; else node.value = value;
            node.dispatchEvent(new Event("input", {bubbles: true}));
        }
        return (performance.now() - start) / 1000;
    }"""
    metric = str(
        page.evaluate(
            "JSON.parse(document.getElementById('gg-data').textContent).metrics.indexOf('bleu')"
        )
    )
    timings = {
        "sort": page.evaluate(timed, ["th button[data-sort=id]", None]),
        "filter": page.evaluate(timed, ["input[name=regressed]", True]),
        "metric": page.evaluate(timed, ["select[name=metric]", metric]),
        "search": page.evaluate(timed, ["input[name=q]", "translate-00"]),
    }
    shown = _cells(page, 1)
    assert shown and all(t.lstrip("\u25b8 ").startswith("translate-00") for t in shown)
    assert set(_cells(page, 3)) == {"bleu"}
    figures = {"md_s": md_s, "md_chars": len(markdown), "render_s": render_s, "bytes": size}
    for key, value in {**figures, "load_s": load_s, **timings}.items():
        record_property(key, value)
    print(
        f"\n10,000 examples: Markdown {md_s:.2f} s, {len(markdown):,} chars; "
        f"HTML render {render_s:.2f} s, {size / 1e6:.1f} MB, load {load_s:.2f} s, "
        + ", ".join(f"{k} {v * 1000:.0f} ms" for k, v in timings.items())
    )
    assert w.errors == []
    # Generous bounds for a loaded 2-core CI machine; typical figures are far lower.
    assert render_s < 20 and load_s < 15 and size < 30e6
    assert max(timings.values()) < 3
