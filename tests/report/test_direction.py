"""A lower-is-better metric end to end: a rise fails, a fall is "improved", and the terminal,
Markdown, HTML and JUnit reports mark a rise as the worsening (red, bold) and a fall as good."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from goldgate.model.config_loading import load_config
from goldgate.model.result import CheckStatus, RunResult, Verdict
from goldgate.report.markdown import ident
from goldgate.report.text import summary
from goldgate.runner import bless, run

# Lower-is-better metrics: TER, and the test-only error rate (binary, so flips count too).
METRICS = {"ter": "ter", "error": "tests.gate_metrics:ErrorRate"}

CONFIG = """\
version: 1
system:
  predictions: "preds/{{suite}}.jsonl"
suites:
  mt:
    goldens: goldens/mt.jsonl
    metrics: {{{spec!r}: {{}}}}
    gate:
      {spec!r}: {{max_drop: 1.0, slices: true}}
significance: {{seed: 0, resamples: 200}}
report: {{dir: out, formats: [md, html, json, junit]}}
"""

N = 40


def _write_jsonl(path: Path, rows: list[dict[str, object]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


def _project(root: Path, spec: str) -> None:
    (root / "goldgate.yaml").write_text(CONFIG.format(spec=spec), encoding="utf-8")
    references = [f"the cat number {i} sat on the mat" for i in range(N)]
    _write_jsonl(
        root / "goldens" / "mt.jsonl",
        [
            {
                "id": f"s{i:02d}",
                "input": str(i),
                "reference": r,
                "tags": ["even" if i % 2 else "odd"],
            }
            for i, r in enumerate(references)
        ],
    )


def _outputs(root: Path, wrong: int) -> None:
    """The first ``wrong`` outputs wrong, every other one equal to its reference."""
    _write_jsonl(
        root / "preds" / "mt.jsonl",
        [
            {
                "id": f"s{i:02d}",
                "output": "a dog stood" if i < wrong else f"the cat number {i} sat on the mat",
            }
            for i in range(N)
        ],
    )


def _run(root: Path, wrong: int) -> RunResult:
    _outputs(root, wrong)
    return run(load_config(root / "goldgate.yaml"))


@pytest.mark.parametrize("spec", sorted(METRICS.values()))
def test_a_rise_fails_and_a_fall_improves_in_every_report(tmp_path: Path, spec: str) -> None:
    _project(tmp_path, spec)
    _outputs(tmp_path, 10)
    bless(load_config(tmp_path / "goldgate.yaml"))

    worse = _run(tmp_path, 30)
    assert worse.verdict is Verdict.REGRESSED and worse.exit_code == 1
    (metric,) = worse.suites[0].metrics
    assert metric.higher_is_better is False
    assert metric.delta is not None and metric.delta > 0
    failed = [c for c in worse.checks() if c.status is CheckStatus.FAIL]
    assert failed and all("rose beyond max_drop" in c.message for c in failed)
    _assert_reports(tmp_path, worse, worsened=True)

    better = _run(tmp_path, 0)
    assert better.verdict is Verdict.IMPROVED and better.exit_code == 0
    (metric,) = better.suites[0].metrics
    assert metric.delta is not None and metric.delta < 0
    improved = [c for c in better.checks() if c.slice is None]
    assert [c.status for c in improved] == [CheckStatus.IMPROVED]
    _assert_reports(tmp_path, better, worsened=False)


def _assert_reports(root: Path, result: RunResult, *, worsened: bool) -> None:
    spec = result.suites[0].metrics[0].metric
    out = root / "out"

    # JSON: the direction is recorded for every metric and check.
    saved = json.loads((out / "result.json").read_text(encoding="utf-8"))
    suite = saved["suites"][0]
    assert suite["metrics"][0]["higher_is_better"] is False
    assert all(c["higher_is_better"] is False for c in suite["checks"])

    # Terminal: the table says lower is better; a rise is a failure, a fall an improvement.
    text = summary(result)
    assert f"{spec} (lower is better)" in text
    if worsened:
        assert "FAIL:" in text and "rose beyond" in text
    else:
        assert "IMPROVED:" in text and "FAIL:" not in text

    # Markdown: a worsening delta is bold, whatever its sign; an improvement is not.
    markdown = (out / "report.md").read_text(encoding="utf-8")
    escaped = ident(spec, table=True)
    (line,) = [
        ln for ln in markdown.splitlines() if ln.startswith(f"| {escaped} (lower is better)")
    ]
    cells = [c.strip() for c in line.split("|")]
    delta = cells[4]
    if worsened:
        assert delta.startswith("**+"), line
    else:
        assert delta.startswith("\u2212") and "**" not in delta, line

    # HTML: the metric row's delta is red (d-down) for a rise, green (d-up) for a fall.
    html = (out / "report.html").read_text(encoding="utf-8")
    row = re.search(
        r'<th scope="row"[^>]*>[^<]*<span class="muted">\(lower is better\)</span></th>'
        r'.*?<td class="num (d-[a-z]+)">([^<]*)</td>',
        html,
        re.S,
    )
    assert row is not None
    assert row.group(1) == ("d-down" if worsened else "d-up")
    assert row.group(2).startswith("+" if worsened else "\u2212")
    data = json.loads(
        re.search(r'<script type="application/json" id="[^"]*">(.*?)</script>', html, re.S)
        .group(1)  # type: ignore[union-attr]
        .replace("\\u003c", "<")
    )
    assert data["lower"] == [data["metrics"].index(spec)]

    # JUnit: the rise is a failure that names the direction; a fall passes.
    root_el = ET.fromstring((out / "junit.xml").read_text(encoding="utf-8"))
    failures = list(root_el.iter("failure"))
    if worsened:
        assert failures
        assert all("rose beyond" in (f.get("message") or "") for f in failures)
        assert all("lower is better" in (f.text or "") for f in failures)
    else:
        assert not failures


def test_the_html_example_table_reads_ter_rises_as_worse(browser: Any, tmp_path: Path) -> None:
    """In the browser: a TER rise is red and regressed, sorted first; a fall is green."""
    from tests.report.browser import open_report

    _project(tmp_path, "ter")
    _outputs(tmp_path, 10)
    bless(load_config(tmp_path / "goldgate.yaml"))
    # Examples 0-9 were wrong at the baseline: now 0-4 are right (TER falls), 10-19 wrong (rises).
    _write_jsonl(
        tmp_path / "preds" / "mt.jsonl",
        [
            {
                "id": f"s{i:02d}",
                "output": "a dog stood" if 5 <= i < 20 else f"the cat number {i} sat on the mat",
            }
            for i in range(N)
        ],
    )
    run(load_config(tmp_path / "goldgate.yaml"))
    watched = open_report(browser, tmp_path / "out" / "report.html")
    page = watched.page
    assert watched.errors == []
    rows = page.eval_on_selector_all(
        "#gg-rows tr:not(.detail)",
        "rows => rows.map(r => [r.cells[1].textContent, r.cells[6].textContent,"
        " r.cells[6].className, r.className])",
    )
    by_id = {row[0].lstrip("\u25b8\u25be "): row for row in rows}
    rise, fall, same = by_id["s12"], by_id["s02"], by_id["s30"]
    assert rise[1].startswith("+") and "d-down" in rise[2] and rise[3] == "regressed"
    assert fall[1].startswith("\u2212") and "d-up" in fall[2] and fall[3] == "improved"
    assert "d-down" not in same[2] and "d-up" not in same[2]
    # Worst first: every rise before every fall.
    order = [row[0].lstrip("\u25b8\u25be ") for row in rows]
    assert max(order.index(f"s{i:02d}") for i in range(10, 20)) < min(
        order.index(f"s{i:02d}") for i in range(5)
    )
    page.check("input[name=regressed]")
    shown = {t.lstrip("\u25b8\u25be ") for t in page.eval_on_selector_all(
        "#gg-rows tr:not(.detail)", "rows => rows.map(r => r.cells[1].textContent)"
    )}  # fmt: skip
    assert shown == {f"s{i:02d}" for i in range(10, 20)}
