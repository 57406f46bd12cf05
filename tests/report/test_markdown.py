from __future__ import annotations

import bisect
import html
import random
import re
from html.parser import HTMLParser

import pytest

from goldgate.model.result import RunResult
from goldgate.report import render
from goldgate.report.markdown import (
    MARKER,
    MAX_CHARS,
    code,
    html_text,
    ident,
    prose,
    render_markdown,
)
from tests.report.fixtures import (
    CONTROLS,
    HOSTILE,
    KINDS,
    RAW_CONTROL,
    WORDINGS,
    hostile_result,
    large_result,
    make_result,
    many_suites_result,
    wording_result,
)
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
    assert "left out to fit a comment" in text


@pytest.mark.parametrize("evil", HOSTILE)
def test_escape_neutralises(evil: str) -> None:
    # In an HTML block only < > & act; on a Markdown line a code span holds everything.
    for out in (html_text(evil), html_text(evil, newline="\n")):
        assert "<" not in out and ">" not in out.replace("&gt;", "")
        assert not re.search(r"@\w", out)
    for out in (code(evil), code(evil, table=True), prose(evil), ident(evil)):
        assert not re.search(r"@\w", out)
        assert "\n" not in out


def test_code_span_fence_is_longer_than_any_backtick_run() -> None:
    assert code("a `b` c") == "``a `b` c``"
    assert code("```") == "```` ``` ````"
    assert code("x|y", table=True) == "`x\\|y`"
    assert code("") == "\u2205"


def test_identifiers_and_plain_words_are_written_as_they_are() -> None:
    for name in ("exact_match", "rougeLsum", "chrf++", "0.1.0", "2026-11-30T12:00:00+00:00"):
        assert ident(name) == name
    for name in ("_private", "http://x.example", "www.example.com", "a*b", "<b>"):
        assert ident(name).startswith("`")
    assert prose("Scores improved: run `goldgate bless` to accept.") == (
        "Scores improved: run `goldgate bless` to accept."
    )
    assert prose("- item") == "`-` item"
    assert prose("see <b>bold</b> now") == "see `<b>bold</b>` now"
    assert prose("p = 0.004 < \u03b1 0.05") == "p = 0.004 < \u03b1 0.05"


@pytest.mark.parametrize("kind", KINDS)
def test_raw_markdown_has_no_character_references(kind: str) -> None:
    # Nothing goldgate writes itself is hidden behind &#...; in the raw text.
    text = render_markdown(make_result(kind))  # type: ignore[arg-type]
    assert "&#" not in text
    assert "qa::exact_match::max_drop" in text or kind == "pass" or kind == "improved"
    assert "goldgate 0.1.0" in text


@pytest.mark.parametrize("which", WORDINGS)
def test_wording_snapshot(which: str) -> None:
    text = render_markdown(wording_result(which))  # type: ignore[arg-type]
    head = text.split("\n### ")[0]
    assert_snapshot(f"wording-{which}.md", head + "\n")


def test_sections_are_named_for_what_they_hold() -> None:
    failed = render_markdown(wording_result("failed"))
    assert "**Failed (1)**" in failed
    assert "Forgiven" not in failed and "**Improved" not in failed
    forgiven = render_markdown(wording_result("forgiven"))
    assert "**Forgiven as noise (1)**" in forgiven and "**Failed" not in forgiven
    improved = render_markdown(wording_result("improved"))
    assert "**Improved (1)**" in improved and "**Failed" not in improved
    assert (
        "rose 13.33 points (31.12 \u2192 44.45), more than the 2.00 tolerance; bless to accept"
        in (improved)
    )
    assert "improved beyond" not in improved


def test_input_and_tags_beside_each_example() -> None:
    text = render_markdown(make_result("regressed"))
    block = text[text.index("<summary><code>qa-007</code>") :]
    block = block[: block.index("</details>")]
    assert "**Input**" in block and "<pre>question: question 7?</pre>" in block
    summarize = text[text.index("<summary><code>summarize-002</code>") :]
    assert summarize.split("</summary>")[0].endswith(
        "tags: <code>legal</code> <code>medical</code> <code>short</code>"
    )
    assert "<pre>document 2</pre>" in summarize


def test_examples_link_to_their_anchor_when_the_report_url_is_known() -> None:
    url = "https://example.github.io/run/42/report.html"
    text = render_markdown(make_result("regressed"), report_url=url)
    assert f'<a href="{url}#qa-007"><code>qa-007</code></a>' in text
    assert "<a href" not in render_markdown(make_result("regressed"))


def test_truncation_cuts_between_blocks_never_inside_a_table() -> None:
    # Issue 9, item 13: hundreds of regressed suites used to cut inside a table, so the
    # "truncated" note rendered as one more table row.
    text = render_markdown(many_suites_result(300))
    assert len(text) <= MAX_CHARS
    note = next(line for line in text.splitlines() if "left out to fit a comment" in line)
    before = text[: text.index(note)]
    assert before.endswith("\n\n"), "the note starts a block of its own"
    assert not note.startswith("|")
    html = _github_html(text)
    parsed = _Collector()
    parsed.feed(html)
    assert "left out to fit a comment" not in "".join(
        cell for cell in re.findall(r"<td>(.*?)</td>", html, flags=re.S)
    )
    assert html.count("<table>") == html.count("</table>")


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


def test_control_characters_are_escaped_as_on_the_terminal() -> None:
    # Issue 30, item 9: a raw U+202E from model output reached report.md and reversed the
    # line in every viewer, where the terminal shows it as \u202e.
    text = render_markdown(hostile_result(CONTROLS))
    assert not RAW_CONTROL.search(text), RAW_CONTROL.findall(text)
    assert "invoice_\\u202etxt.exe" in text
    assert "\\x1b[31mred\\x1b[0m" in text
    for evil in CONTROLS:
        for out in (html_text(evil), code(evil), prose(evil), ident(evil)):
            assert not RAW_CONTROL.search(out), out
    assert html_text("a\u202eb\x1bc\td") == "a\\u202eb\\x1bc\td"
    assert code("\u2066x") == "`\\u2066x`"


def test_counts_agree_with_their_nouns() -> None:
    # Issue 30, item 18: "1 examples", "1 blesses": every count goes through wording.plural.
    text = render_markdown(make_result("regressed", n_examples=1))
    assert "1 example in `goldens/qa.jsonl`" in text
    assert "1 examples" not in text


def test_never_longer_than_max_chars_whatever_the_budget() -> None:
    # Issue 30, item 21: the cap is what keeps a PR comment under GitHub's limit, so it is
    # swept over budgets from the smallest that holds the verdict to past the whole report,
    # on reports of every shape: few and many sections, many examples, huge and hostile texts.
    results = {
        "regressed": make_result("regressed"),
        "examples": large_result(300),
        "sections": many_suites_result(30),
        "hostile": hostile_result(),
        "huge": make_result("regressed", n_examples=30, texts=["word " * 5_000]),
    }
    rng = random.Random(30)
    for name, result in results.items():
        whole = len(render_markdown(result, max_chars=10**9))
        with pytest.raises(ValueError, match="too small"):
            render_markdown(result, max_chars=100)
        least = bisect.bisect_left(range(100, 1_000), True, key=lambda m: _fits(result, m)) + 100
        assert not _fits(result, least - 1) and _fits(result, least)
        budgets = {
            *range(least, least + 400, 3),
            *(rng.randint(least, whole + 50) for _ in range(60)),
        }
        for max_chars in sorted(budgets):
            text = render_markdown(result, max_chars=max_chars)
            assert len(text) <= max_chars, (name, max_chars, len(text))
            assert text.startswith(MARKER + "\n## ")
            assert text.count("<details>") == text.count("</details>"), (name, max_chars)


def _fits(result: RunResult, max_chars: int) -> bool:
    try:
        render_markdown(result, max_chars=max_chars)
    except ValueError:
        return False
    return True


@pytest.mark.parametrize(
    "text",
    ["AT&T", "&amp;", "&lt;b&gt;bold&lt;/b&gt;", "&#x3c;script&#x3e;", "a < b > c & d", "&copy; &"],
)
def test_html_text_shows_entities_literally(text: str) -> None:
    # Issue 30, item 21: without escaping `&` first, an entity in a model output would render
    # as the character it names (`&lt;b&gt;` as `<b>`), and escaping it after `<` would show
    # `&lt;` for `<`. What a browser or GitHub reads back is the text itself.
    for newline in (" ", "\n"):
        shown = html_text(text, newline=newline)
        assert html.unescape(shown) == text
        parsed = _Collector()
        parsed.feed(f"<pre>{shown}</pre>")
        assert "".join(parsed.text) == text
    assert html_text("&") == "&amp;" and html_text("<&>") == "&lt;&amp;&gt;"
