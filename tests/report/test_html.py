from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser

import pytest

from goldgate.report import render
from goldgate.report.html import example_data, script_json
from tests.report.fixtures import (
    CONTROLS,
    HOSTILE,
    KINDS,
    RAW_CONTROL,
    WORDINGS,
    hostile_result,
    make_result,
    wording_result,
)


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self._in: tuple[str, dict[str, str | None]] | None = None
        self._buf: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag in ("script", "style"):
            self._in, self._buf = (tag, dict(attrs)), []

    def handle_data(self, data: str) -> None:
        if self._in:
            self._buf.append(data)

    def handle_endtag(self, tag: str) -> None:
        if self._in and tag == self._in[0]:
            text = "".join(self._buf)
            if tag == "script":
                self.scripts.append((self._in[1], text))
            else:
                self.styles.append(text)
            self._in = None


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    return page


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@pytest.mark.parametrize("kind", KINDS)
def test_self_contained_with_a_strict_policy(kind: str) -> None:
    html = render(make_result(kind), "html")  # type: ignore[arg-type]
    page = _parse(html)
    csp = next(
        a["content"] for t, a in page.tags if a.get("http-equiv") == "Content-Security-Policy"
    )
    assert csp is not None and csp.startswith("default-src 'none';")
    # Only the page's own script and style run: their hashes are in the policy.
    code = [text for attrs, text in page.scripts if attrs.get("type") != "application/json"]
    assert len(code) == 1 and _sha(code[0]) in csp
    assert len(page.styles) == 1 and _sha(page.styles[0]) in csp
    for tag, attrs in page.tags:
        for name in ("src", "href", "action", "srcset"):
            value = attrs.get(name)
            assert value is None or value.startswith(("#", "data:")), (tag, name, value)
        assert "style" not in attrs, tag  # inline style attributes would break the policy
    assert "http://" not in html.replace("http://www.w3.org/2000/svg", "")
    assert "https://" not in html


def test_rows_json_round_trips_and_cannot_close_its_script() -> None:
    result = hostile_result()
    html = render(result, "html")
    page = _parse(html)
    raw = next(text for attrs, text in page.scripts if attrs.get("id") == "gg-data")
    assert "<" not in raw and ">" not in raw and "&" not in raw
    assert json.loads(raw) == example_data(result)


def test_script_json_escapes_markup() -> None:
    assert str(script_json("</script><!--&")) == '"\\u003c/script\\u003e\\u003c!--\\u0026"'


def test_hostile_text_is_escaped_everywhere() -> None:
    html = render(hostile_result(), "html")
    page = _parse(html)
    assert not any(
        tag in ("img", "iframe", "textarea", "a")
        and "href" in a
        and "javascript" in (a.get("href") or "")
        for tag, a in page.tags
    )
    assert not any(tag in ("img", "iframe", "textarea") for tag, _ in page.tags)
    assert all(not name.startswith("on") for _, attrs in page.tags for name in attrs)
    assert len([t for t, _ in page.tags if t == "script"]) == 2
    assert len([t for t, _ in page.tags if t == "style"]) == 1
    for evil in HOSTILE:
        if "<" in evil:
            assert evil not in html
    # The summary (checks, slices, hints, errors) shows them as text.
    assert "&lt;script&gt;window.__pwned = 1;" in html


def test_same_result_same_bytes() -> None:
    assert render(make_result("regressed"), "html") == render(make_result("regressed"), "html")


def test_only_the_timestamp_varies() -> None:
    a = render(make_result("regressed", created_at="2026-01-01T00:00:00+00:00"), "html")
    b = render(make_result("regressed", created_at="2027-02-02T11:11:11+00:00"), "html")
    assert re.sub(r"20\d\d-\d\d-\d\dT[\d:+]+", "T", a) == re.sub(
        r"20\d\d-\d\d-\d\dT[\d:+]+", "T", b
    )


@pytest.mark.parametrize("which", WORDINGS)
def test_check_sections_are_named_for_what_they_hold(which: str) -> None:
    html = render(wording_result(which), "html")  # type: ignore[arg-type]
    headings = re.findall(r'<section class="checks-flagged[^"]*"[^>]*>\s*<h2>([^<]*)</h2>', html)
    expected = {
        "failed": ["Failed (1)"],
        "forgiven": ["Forgiven as noise (1)"],
        "improved": ["Improved (1)"],
        "mixed": ["Failed (1)", "Forgiven as noise (1)", "Improved (1)"],
    }[which]
    assert headings == expected
    if which in ("improved", "mixed"):
        assert "rose 13.33 points (31.12 \u2192 44.45), more than the 2.00 tolerance; bless" in html


def test_backticks_in_hints_are_code_not_literal_backticks() -> None:
    html = render(wording_result("improved"), "html")
    assert "run <code>goldgate bless</code> to make these scores" in html
    assert "`goldgate bless`" not in html


def _texts(value: object) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [text for item in value for text in _texts(item)]
    if isinstance(value, dict):
        return [text for key, item in value.items() for text in [key, *_texts(item)]]
    return []


def test_control_characters_are_escaped_as_on_the_terminal() -> None:
    # Issue 30, item 9: autoescaping and textContent leave a bidi override (U+202E) raw, so a
    # model output could reverse what the page shows; the terminal shows it as \u202e.
    from urllib.parse import unquote

    from goldgate.report.markdown import render_markdown

    result = hostile_result(CONTROLS)
    html = render(result, "html")
    assert not RAW_CONTROL.search(html), RAW_CONTROL.findall(html)
    assert "invoice_\\u202etxt.exe" in html  # the checks' messages, written by the template
    page = _parse(html)
    raw = next(text for attrs, text in page.scripts if attrs.get("id") == "gg-data")
    data = json.loads(raw)  # json.dumps writes C0 as \u001b: raw again once the script reads it
    shown = _texts(data)
    assert not [text for text in shown if RAW_CONTROL.search(text)]
    assert any("\\x1b[31mred" in text for text in shown)
    # The Markdown report links to an example by the anchor the page gives it.
    markdown = render_markdown(result, report_url="https://example.test/report.html")
    hrefs = re.findall(r'href="https://example.test/report.html#([^"]*)"', markdown)
    linked = {unquote(href) for href in hrefs}
    anchors = {row["a"] for row in data["rows"]}
    assert linked and linked <= anchors


def test_counts_agree_with_their_nouns() -> None:
    # Issue 30, item 18: "1 examples in", "All 1 gate checks".
    page = render(make_result("regressed", n_examples=1), "html")
    assert "1 example in <code>goldens/qa.jsonl</code>" in page
    assert "1 examples" not in page
    assert not re.search(r"All 1 (gate checks|slice metrics)<", page)
