"""The plain-text summary (``--format text``) and the OpenMetrics report (``metrics``)."""

from __future__ import annotations

import re

import pytest

from goldgate.report import render
from goldgate.report.text import summary
from tests.report.fixtures import KINDS, hostile_result, make_result

LINE_NOISE = ['q"uo\\te\nnew', "::error::pwned", "  ::add-mask::x", "bell\x07 esc\x1b[31m"]


@pytest.mark.parametrize("kind", KINDS)
def test_text_is_the_printed_summary(kind: str) -> None:
    result = make_result(kind)  # type: ignore[arg-type]
    assert render(result, "text") == summary(result) + "\n"


def test_text_has_no_runner_command_and_no_raw_control() -> None:
    text = render(hostile_result(LINE_NOISE), "text")
    assert "pwned" in text
    assert not any(line.lstrip().startswith("::") for line in text.splitlines())
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f]", text)


@pytest.mark.parametrize("kind", KINDS)
def test_metrics_parse_as_openmetrics_and_carry_every_score(kind: str) -> None:
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    result = make_result(kind)  # type: ignore[arg-type]
    text = render(result, "metrics")
    families = {f.name: f for f in parser.text_string_to_metric_families(text)}
    scores = {
        (s.labels["suite"], s.labels.get("slice"), s.labels["metric"]): s.value
        for s in families["goldgate_score"].samples
    }
    for suite in result.suites:
        for m in suite.metrics:
            assert scores[(suite.name, None, m.metric)] == pytest.approx(m.current, abs=0.005)
        for piece in suite.slices:
            for m in piece.metrics:
                assert (suite.name, piece.tag, m.metric) in scores
    passed = families["goldgate_passed"].samples[0].value
    assert passed == (1.0 if result.exit_code == 0 else 0.0)
    failed = {s.labels["suite"]: s.value for s in families["goldgate_checks_failed"].samples}
    assert sum(failed.values()) == sum(c.status.value == "fail" for c in result.checks())


def test_hostile_labels_are_escaped_and_still_parse() -> None:
    parser = pytest.importorskip("prometheus_client.openmetrics.parser")
    result = hostile_result(LINE_NOISE)
    text = render(result, "metrics")
    families = list(parser.text_string_to_metric_families(text))
    slices = {s.labels.get("slice") for f in families for s in f.samples} - {None}
    assert any('q"uo\\te\nnew' in tag for tag in slices)
    assert not any(line.startswith("::") for line in text.splitlines())
