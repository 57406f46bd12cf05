"""JUnit XML: one test case per gate check, so CI systems list and count them.

A failed check is a ``<failure>`` carrying its message; a check that could not be evaluated
is ``<skipped>``; a suite or run that broke is an ``<error>``. A check forgiven as noise
passes, and says so in ``<system-out>``.

Each suite's ``<properties>`` carry what a CI shows without a plugin: the verdict, the golden
set, and per metric (and per tag slice) its score, baseline, delta and confidence interval in
points, as plain ASCII numbers (``metric.bleu.score``, ``slice.short.metric.bleu.delta``).
Properties sit on the ``<testsuite>``: the common schema (Jenkins' junit-10.xsd) has none on
a ``<testcase>``.
"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence

from goldgate.model.result import CheckResult, CheckStatus, MetricSummary, RunResult, SuiteResult
from goldgate.report.formatting import (
    DECIMALS,
    fmt_delta,
    fmt_interval,
    fmt_points,
    fmt_threshold,
    round_points,
)

# Characters XML 1.0 cannot carry, even escaped.
_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|[\ud800-\udfff]")


def _clean(text: str) -> str:
    return _ILLEGAL.sub("\ufffd", text)


def _case_name(check: CheckResult) -> str:
    where = f"[{check.slice}]" if check.slice else ""
    return f"{check.metric}{where}::{check.rule}"


def _details(check: CheckResult) -> str:
    lines = [
        check.message,
        f"check: {check.id}",
        f"rule: {fmt_threshold(check)}",
        f"current: {fmt_points(check.current)}",
        f"baseline: {fmt_points(check.baseline)}",
        f"delta: {fmt_delta(check.delta)}",
        f"interval: {fmt_interval(check.interval)}",
    ]
    if not check.higher_is_better:
        lines.append("direction: lower is better (a positive delta is a worsening)")
    if check.flips is not None:
        lines.append(f"flips: {check.flips}")
    return "\n".join(lines)


def _testcase(parent: ET.Element, classname: str, check: CheckResult) -> str:
    case = ET.SubElement(
        parent, "testcase", {"name": _clean(_case_name(check)), "classname": classname, "time": "0"}
    )
    if check.status is CheckStatus.FAIL:
        failure = ET.SubElement(
            case, "failure", {"message": _clean(check.message), "type": check.rule}
        )
        failure.text = _clean(_details(check))
        return "failures"
    if check.status is CheckStatus.SKIPPED:
        ET.SubElement(case, "skipped", {"message": _clean(check.message)})
        return "skipped"
    out = ET.SubElement(case, "system-out")
    out.text = _clean(f"{check.status.value}: {_details(check)}")
    return "tests"


def _must_pass_cases(parent: ET.Element, classname: str, check: CheckResult) -> list[str]:
    """One test case per example a must-pass rule selected: each example is a contract."""
    from goldgate.report.must_pass_view import junit_cases

    kinds = []
    selection = check.must_pass.selection if check.must_pass is not None else ""
    for row in junit_cases(check):
        name = f"{_case_name(check)}[{selection}]::{row.example_id}"
        case = ET.SubElement(
            parent, "testcase", {"name": _clean(name), "classname": classname, "time": "0"}
        )
        summary = f"{row.example_id}: {row.metric} {row.score}, needs {row.threshold}"
        if row.passed:
            out = ET.SubElement(case, "system-out")
            out.text = _clean(f"pass: {summary}\ncheck: {row.check_id}")
            kinds.append("tests")
            continue
        failure = ET.SubElement(case, "failure", {"message": _clean(summary), "type": check.rule})
        failure.text = _clean(
            f"{summary}\ncheck: {row.check_id}\noutput:\n{row.output}\nreference:\n{row.reference}"
        )
        kinds.append("failures")
    return kinds


def _number(value: float | None) -> str | None:
    """A score in points for a machine to read: ASCII, rounded as the reports round."""
    if value is None or not math.isfinite(value):
        return None
    rounded = round_points(value)
    return f"{0 if rounded == 0 else rounded:.{DECIMALS}f}"


def _metric_properties(prefix: str, metrics: Sequence[MetricSummary]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str | None]] = []
    for summary in metrics:
        name = f"{prefix}metric.{summary.metric}."
        interval = summary.interval
        pairs += [
            (name + "score", _number(summary.current)),
            (name + "baseline", _number(summary.baseline)),
            (name + "delta", _number(summary.delta)),
            (name + "interval_low", _number(None if interval is None else interval.low)),
            (name + "interval_high", _number(None if interval is None else interval.high)),
            (name + "interval_level", None if interval is None else f"{interval.level:g}"),
        ]
        if not summary.higher_is_better:
            pairs.append((name + "direction", "lower is better"))
    return [(name, value) for name, value in pairs if value is not None]


def suite_properties(suite: SuiteResult) -> list[tuple[str, str]]:
    """The suite's ``<property>`` names and values, in order."""
    pairs = [
        ("verdict", suite.verdict.value),
        ("goldens", suite.goldens),
        ("golden_hash", suite.golden_hash),
        ("examples", str(suite.n_examples)),
    ]
    pairs += _metric_properties("", suite.metrics)
    for piece in suite.slices:
        pairs += _metric_properties(f"slice.{piece.tag}.", piece.metrics)
    return pairs + _diagnosis_properties(suite)


def _suite(root: ET.Element, suite: SuiteResult, timestamp: str) -> dict[str, int]:
    classname = _clean(f"goldgate.{suite.name}")
    element = ET.SubElement(root, "testsuite", {"name": classname})
    counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    properties = ET.SubElement(element, "properties")
    for name, value in suite_properties(suite):
        ET.SubElement(properties, "property", {"name": _clean(name), "value": _clean(value)})
    for check in suite.checks:
        if check.must_pass is not None and check.must_pass.examples:
            for kind in _must_pass_cases(element, classname, check):
                counts["tests"] += 1
                if kind != "tests":
                    counts[kind] += 1
            continue
        kind = _testcase(element, classname, check)
        counts["tests"] += 1
        if kind != "tests":
            counts[kind] += 1
    if suite.error:
        case = ET.SubElement(
            element, "testcase", {"name": "run", "classname": classname, "time": "0"}
        )
        error = ET.SubElement(case, "error", {"message": _clean(suite.error), "type": "error"})
        error.text = _clean(suite.error)
        counts["tests"] += 1
        counts["errors"] += 1
    _set_counts(element, counts, timestamp)
    return counts


def _diagnosis_properties(suite: SuiteResult) -> list[tuple[str, str]]:
    """The diagnosis as properties: the headline, and per category its counts
    (``category.empty`` = ``blessed 0, current 22, new 22, regressed 22``)."""
    found = suite.diagnosis
    if found is None:
        return []
    props = [("why", found.headline), ("regressed_examples", str(found.regressed))]
    for name, counts in found.categories.items():
        parts = [
            f"{label} {'-' if value is None else value}"
            for label, value in (
                ("blessed", counts.baseline),
                ("current", counts.current),
                ("new", counts.new),
                ("regressed", counts.regressed),
            )
        ]
        props.append((f"category.{name}", ", ".join(parts)))
    return props


def _set_counts(element: ET.Element, counts: dict[str, int], timestamp: str | None) -> None:
    for key in ("tests", "failures", "errors", "skipped"):
        element.set(key, str(counts[key]))
    element.set("time", "0")
    if timestamp is not None:
        element.set("timestamp", timestamp)


def render_junit(result: RunResult) -> str:
    """Render the gate checks as JUnit XML."""
    root = ET.Element("testsuites", {"name": "goldgate"})
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    # JUnit's timestamp has no time zone; the result's is ISO 8601, cut to seconds.
    timestamp = _clean(result.created_at[:19])
    for suite in result.suites:
        for key, value in _suite(root, suite, timestamp).items():
            totals[key] += value
    suite_errors = {f"{s.name}: {s.error}" for s in result.suites if s.error}
    run_errors = [e for e in result.errors if e not in suite_errors]
    if run_errors:
        element = ET.SubElement(root, "testsuite", {"name": "goldgate"})
        for i, message in enumerate(run_errors, 1):
            case = ET.SubElement(
                element, "testcase", {"name": f"error {i}", "classname": "goldgate", "time": "0"}
            )
            error = ET.SubElement(case, "error", {"message": _clean(message), "type": "error"})
            error.text = _clean(message)
        counts = {"tests": len(run_errors), "failures": 0, "errors": len(run_errors), "skipped": 0}
        _set_counts(element, counts, timestamp)
        for key, value in counts.items():
            totals[key] += value
    _set_counts(root, totals, None)
    # The common JUnit schema (Jenkins' junit-10.xsd) has no skipped count on the root.
    del root.attrib["skipped"]
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"
