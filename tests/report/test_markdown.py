from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from goldgate.report import render
from goldgate.report.markdown import MARKER, MAX_CHARS, escape, escape_block, render_markdown
from tests.report.fixtures import HOSTILE, KINDS, hostile_result, large_result, make_result
from tests.report.snapshot import assert_snapshot

GITHUB_LIMIT = 65_000


@pytest.mark.parametrize("kind", KINDS)
def test_snapshot(kind: str) -> None:
    assert_snapshot(f"{kind}.md", render(make_result(kind), "md"))  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", KINDS)
def test_marker_then_verdict_first(kind: str) -> None:
    text = render_markdown(make_result(kind))  # type: ignore[arg-type]
    lines = text.splitlines()
    assert lines[0] == MARKER
    label = {"pass": "passed", "regressed": "regressed", "improved": "improved", "error": "error"}
    assert lines[1].startswith("## ") and lines[1].endswith(f"goldgate: {label[kind]}")


def test_same_result_same_bytes() -> None:
    assert render_markdown(make_result("regressed")) == render_markdown(make_result("regressed"))


def test_error_result_shows_the_error_and_the_broken_suite() -> None:
    text = render_markdown(make_result("error"))
    assert "CUDA out of memory" in text
    assert "[!CAUTION]" in text.split("###")[0]


def test_large_result_stays_under_the_limit() -> None:
    result = large_result(10_000)
    text = render_markdown(result)
    assert len(text) <= MAX_CHARS < GITHUB_LIMIT
    assert text.startswith(MARKER + "\n## ")
    assert "of " in text and "regressed examples" in text  # the list says it was cut
    assert text.count("<details>") == text.count("</details>")
    assert text.count("<pre>") == text.count("</pre>")


def test_huge_texts_are_clipped_not_the_verdict() -> None:
    result = make_result("regressed", n_examples=30, texts=["word " * 20_000])
    text = render_markdown(result)
    assert len(text) <= MAX_CHARS
    assert "more characters" in text


def test_tiny_budget_keeps_the_verdict() -> None:
    text = render_markdown(make_result("regressed"), max_chars=1_500)
    assert len(text) <= 1_500
    assert "goldgate: regressed" in text
    assert "truncated" in text


@pytest.mark.parametrize("evil", HOSTILE)
def test_escape_neutralises(evil: str) -> None:
    for out in (escape(evil), escape_block(evil)):
        assert "<" not in out.replace("&#60;", "").replace("&lt;", "")
        assert not re.search(r"@\w", out)
    assert not re.search(r"[\[\]()!`|*_]", escape(evil))


def test_escape_line_start() -> None:
    assert escape("- item") == "&#45; item"
    assert escape("12. item").startswith("12&#46;")
    assert escape("# title").startswith("&#35;")


class _Collector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.stack: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _github_html(markdown: str) -> str:
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    # UNSAFE keeps raw HTML as GitHub's renderer does before its sanitiser; what survives
    # here is the most a reader's browser could be handed.
    return str(
        cmarkgfm.github_flavored_markdown_to_html(markdown, options=Options.CMARK_OPT_UNSAFE)
    )


def test_hostile_text_renders_inert_in_github_markdown() -> None:
    markdown = render_markdown(hostile_result())
    html = _github_html(markdown)
    parsed = _Collector()
    parsed.feed(html)
    allowed = {
        "h2",
        "h3",
        "h4",
        "p",
        "code",
        "pre",
        "del",
        "ins",
        "details",
        "summary",
        "strong",
        "em",
        "table",
        "thead",
        "tbody",
        "tr",
        "th",
        "td",
        "ul",
        "li",
        "blockquote",
        "sub",
    }
    tags = {tag for tag, _ in parsed.tags}
    assert tags <= allowed, tags - allowed
    for tag, attrs in parsed.tags:
        assert not any(name.startswith("on") for name in attrs), (tag, attrs)
        assert tag != "a"
    text = "".join(parsed.text)
    # The texts are shown literally ...
    assert "<script>window.__pwned = 1; alert('x')</script>" in text
    assert "![tracker](https://evil.example/t.png)" in text
    # ... and no mention can reach GitHub's mention filter.
    assert not re.search(r"@[A-Za-z0-9]", text)
    assert "@\u200boctocat" in text
