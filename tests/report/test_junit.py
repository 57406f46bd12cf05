from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from goldgate.model.result import CheckStatus
from goldgate.report import render
from tests.report.fixtures import KINDS, hostile_result, make_result

XSD = Path(__file__).with_name("junit.xsd")


def _render(kind: str) -> str:
    return render(make_result(kind), "junit")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_valid_against_the_junit_schema(kind: str) -> None:
    xmlschema = pytest.importorskip("xmlschema")
    schema = xmlschema.XMLSchema(str(XSD))
    schema.validate(_render(kind))


def test_hostile_text_is_valid_xml() -> None:
    xmlschema = pytest.importorskip("xmlschema")
    text = render(hostile_result(), "junit")
    xmlschema.XMLSchema(str(XSD)).validate(text)
    root = ET.fromstring(text)
    messages = [f.get("message") for f in root.iter("failure")]
    assert any("<script>window.__pwned" in (m or "") for m in messages)


@pytest.mark.parametrize("kind", KINDS)
def test_one_case_per_check_and_failures_carry_the_reason(kind: str, tmp_path: Path) -> None:
    junitparser = pytest.importorskip("junitparser")
    result = make_result(kind)  # type: ignore[arg-type]
    path = tmp_path / "junit.xml"
    path.write_text(_render(kind), encoding="utf-8")
    xml = junitparser.JUnitXml.fromfile(str(path))
    cases = {(suite.name, case.name): case for suite in xml for case in suite if case.name != "run"}
    checks = [c for c in result.checks()]
    assert len(cases) == len(checks) + len([e for e in result.errors if "summarize" not in e])
    for check in checks:
        where = f"[{check.slice}]" if check.slice else ""
        case = cases[(f"goldgate.{check.suite}", f"{check.metric}{where}::{check.rule}")]
        kinds = {type(r).__name__ for r in case.result}
        if check.status is CheckStatus.FAIL:
            assert kinds == {"Failure"}
            assert case.result[0].message == check.message
        elif check.status is CheckStatus.SKIPPED:
            assert kinds == {"Skipped"}
        else:
            assert case.is_passed
    total_failures = sum(c.status is CheckStatus.FAIL for c in checks)
    assert int(ET.fromstring(_render(kind)).get("failures", "-1")) == total_failures


def test_error_result_reports_the_broken_suite_as_an_error() -> None:
    root = ET.fromstring(_render("error"))
    errors = [e.get("message") for e in root.iter("error")]
    assert any("CUDA out of memory" in (m or "") for m in errors)
    assert root.get("errors") == "1"


def test_illegal_xml_characters_are_replaced() -> None:
    result = make_result("regressed")
    suite = result.suites[0]
    check = suite.checks[1].model_copy(update={"message": "bad \x00\x1b char"})
    suite = suite.model_copy(update={"checks": [suite.checks[0], check, *suite.checks[2:]]})
    result = result.model_copy(update={"suites": [suite, *result.suites[1:]]})
    text = render(result, "junit")
    assert "bad \ufffd\ufffd char" in ET.fromstring(text).find(".//failure").get("message")  # type: ignore[union-attr]


@pytest.mark.parametrize("kind", KINDS)
def test_each_metric_s_numbers_are_suite_properties(kind: str) -> None:
    result = make_result(kind)  # type: ignore[arg-type]
    root = ET.fromstring(_render(kind))
    for suite in result.suites:
        element = root.find(f"testsuite[@name='goldgate.{suite.name}']")
        assert element is not None
        properties = {p.get("name"): p.get("value") for p in element.iter("property")}
        assert properties["verdict"] == suite.verdict.value
        for prefix, metrics in [("", suite.metrics)] + [
            (f"slice.{s.tag}.", s.metrics) for s in suite.slices
        ]:
            for m in metrics:
                name = f"{prefix}metric.{m.metric}."
                assert float(properties[name + "score"]) == pytest.approx(m.current, abs=0.005)
                for key, value in (("baseline", m.baseline), ("delta", m.delta)):
                    if value is None:
                        assert name + key not in properties
                    else:
                        assert float(properties[name + key]) == pytest.approx(value, abs=0.005)
                if m.interval is not None:
                    low = float(properties[name + "interval_low"])
                    assert low == pytest.approx(m.interval.low, abs=0.005)
                    assert properties[name + "interval_level"] == f"{m.interval.level:g}"
                assert (name + "direction" in properties) is (not m.higher_is_better)
