"""The Markdown report: a GitHub PR comment and job summary, under GitHub's size limit.

It is read raw as often as rendered (job logs, chats, diffs), so it escapes only where text
from outside goldgate is inserted, and there as little as is safe:

- untrusted text on a Markdown line goes in a code span (:func:`code`), whose fence is longer
  than any backtick run inside, so nothing in it is Markdown, HTML, a link or a mention;
- running text such as hints and errors (:func:`prose`) stays plain word by word, and only the
  words that Markdown, GitHub or HTML could act on become code spans;
- an identifier (suite, metric, version) that looks like one is written as is (:func:`ident`);
- inside HTML blocks (``<summary>``, ``<pre>``), where GitHub runs no Markdown, only
  ``< > &`` are escaped, as ``&lt; &gt; &amp;``.

An ``@`` from outside is followed by a zero-width space, so no mention reaches GitHub. Control
characters (C0, C1, bidi overrides and isolates) are shown escaped, as on the terminal.
The report is assembled from whole blocks; when it must be cut, it is cut between blocks, so
the note that says so never lands inside a table or a ``<details>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from urllib.parse import quote

from goldgate.model.examples_file import EXAMPLES_FILE
from goldgate.model.result import RunResult, SuiteResult
from goldgate.report.diagnosis_view import DiagnosisView
from goldgate.report.diff import DiffOp
from goldgate.report.example_view import ExampleRow, ScoreCell, example_row, shared_ids
from goldgate.report.formatting import DASH, clip, fmt_delta, fmt_points
from goldgate.report.must_pass_view import MustPassRow
from goldgate.report.ranking import Picked, ranking_metrics, worst_regressed
from goldgate.report.view import CheckRow, MetricRow, ReportView, SuiteView, build_view, slice_rule
from goldgate.terminal.console import escape_controls
from goldgate.wording import plural

#: the hidden marker a later run looks for to update its own comment
MARKER = "<!-- goldgate-report -->"
#: GitHub rejects a comment of 65,536 characters; keep room for a caller's own lines
MAX_CHARS = 60_000
#: worst regressed examples shown per suite (fewer when the size budget runs out)
MAX_EXAMPLES_PER_SUITE = 10
#: characters of one text (input, reference, output) shown per example
MAX_TEXT_CHARS = 1_200
#: characters of one identifier or tag shown inline
MAX_INLINE_CHARS = 200
MAX_TAGS_SHOWN = 10
MAX_SLICES_PER_SUITE = 20
MAX_CHECK_LINES = 40
MAX_ERROR_CHARS = 2_000

_ZWSP = "\u200b"
_SEP = " \u00b7 "
# An identifier written as is: no character Markdown, GitHub or HTML acts on inside a word.
_IDENT = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9.+:=/-]|(?<=[A-Za-z0-9])_(?=[A-Za-z0-9]))*")
# What makes a word of running text unsafe as it is: inline syntax, an HTML tag or entity,
# a URL or www. autolink, an issue reference, an emphasis underscore, math.
_RISKY_WORD = re.compile(
    r"[`\\*\[\]|~$@{}]|<[A-Za-z/!?]|&#?\w+;|://|www\.|#\d|(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])",
    re.IGNORECASE,
)
# What makes the first word of a line a block marker: list, quote, heading, setext, fence.
_LINE_START = re.compile(r"(?:[-+*>#=]|\d+[.)])")


def _clean(text: str, newline: str) -> str:
    """Control characters escaped as on the terminal, line breaks as ``newline``, ``@`` defused.

    A bidi override (U+202E) or an escape sequence from model output is shown as ``\\u202e``
    or ``\\x1b``, the text the terminal shows for it, never raw.
    """
    text = escape_controls(text.replace("\r\n", "\n").replace("\r", "\n"))
    return text.replace("\n", newline).replace("@", "@" + _ZWSP)


def code(text: str, *, table: bool = False, limit: int = MAX_INLINE_CHARS) -> str:
    """Untrusted text as a code span on one Markdown line (``table``: inside a table cell)."""
    shown, cut = clip(text, limit)
    body = _clean(shown, " ")
    if not body:
        return "\u2205"
    fence = "`" * (max((len(run) for run in re.findall(r"`+", body)), default=0) + 1)
    if body[0] in "` " or body[-1] in "` ":
        body = f" {body} "  # one space each side is stripped by the parser
    if table:
        body = body.replace("|", "\\|")  # GFM unescapes it inside a cell, even in code
    more = f"\u2026 ({cut:,} more characters)" if cut else ""
    return f"{fence}{body}{fence}{more}"


def ident(name: str, *, table: bool = False) -> str:
    """A name (suite, metric, version) as is when it is a plain identifier, else in code."""
    if len(name) <= MAX_INLINE_CHARS and _IDENT.fullmatch(name) and not _RISKY_WORD.search(name):
        return name
    return code(name, table=table)


def prose(text: str, *, limit: int = MAX_ERROR_CHARS) -> str:
    """Running text from outside goldgate, on one Markdown line, as plain as is safe.

    Words Markdown, GitHub or HTML would act on become code spans (a run of them one span);
    a backtick-quoted part (``run `goldgate bless` ``) is shown as the code it means.
    """
    shown, cut = clip(text, limit)
    out: list[str] = []
    risky: list[str] = []

    def flush() -> None:
        if risky:
            out.append(code(" ".join(risky), limit=limit))
            risky.clear()

    parts = re.split(r"(`[^`\n]+`)", _clean(shown, " ").replace(_ZWSP, ""))
    first = True
    for part in parts:
        if part.startswith("`") and part.endswith("`") and len(part) > 2:
            flush()
            out.append(code(part[1:-1]))
            first = False
            continue
        for word in part.split(" "):
            if not word:
                continue
            if _RISKY_WORD.search(word) or (first and _LINE_START.match(word)):
                risky.append(word)
            else:
                flush()
                out.append(_clean(word, " "))
            first = False
    flush()
    more = f" \u2026 ({cut:,} more characters)" if cut else ""
    return " ".join(out) + more


def html_text(text: str, *, newline: str = " ") -> str:
    """Untrusted text inside an HTML block (``<summary>``, ``<pre>``): ``< > &`` escaped."""
    cleaned = _clean(text, newline)
    return cleaned.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(
    result: RunResult, *, max_chars: int = MAX_CHARS, report_url: str | None = None
) -> str:
    """Render the Markdown report; never longer than ``max_chars``.

    With ``report_url`` (where the HTML report will be published), each example shown links
    to its anchor in it. ``ValueError`` when ``max_chars`` cannot hold even the verdict, the
    note that the rest was left out and the footer (a few hundred characters).
    """
    view = build_view(result)
    tail = _footer(view)
    blocks = _head_blocks(view)
    budget = max_chars - len(tail)
    note = (
        "_\u2026 {counted} more left out to fit a comment; the HTML report (report.html) "
        "has every section._\n\n"
    )
    # The verdict is always shown, so it and the note after it must fit.
    least = len(blocks[0]) + len(note) + 20 + len(tail)
    if max_chars < least:
        raise ValueError(f"max_chars {max_chars:,} is too small: the verdict needs {least:,}")
    out: list[str] = []
    used = 0
    for i, block in enumerate(blocks):
        remaining = len(blocks) - i - 1
        reserve = len(note) + 20 if remaining else 0
        if used + len(block) + reserve > budget and i > 0:
            left = len(blocks) - i
            out.append(note.format(counted=plural(left, "section")))
            return "".join(out) + tail
        out.append(block)
        used += len(block)
    examples = _examples_section(result, budget - used, report_url)
    return "".join(out) + examples + tail


def _head_blocks(view: ReportView) -> list[str]:
    """The verdict, the checks and each suite's tables: whole Markdown blocks, in order."""
    blocks = [f"{MARKER}\n## {view.verdict_icon} goldgate: {view.verdict_label}\n\n"]
    meta = []
    if view.baseline:
        found = "" if view.baseline_found else " (not found: no baseline comparison)"
        meta.append(f"baseline {code(view.baseline)}{found}")
    meta.append(prose(view.significance) if view.significance else "significance off")
    if view.budget:
        meta.append(prose(view.budget))
    why = f"**{view.why[:1].upper()}{prose(view.why[1:])}**\n\n" if view.why else ""
    blocks.append(f"{why}{prose(view.headline)}\n\n{_SEP.join(meta)}\n\n")
    if view.errors:
        lines = ["> [!CAUTION]", "> **Errors**"]
        lines += [f"> - {prose(err)}" for err in view.errors]
        blocks.append("\n".join(lines) + "\n\n")
    if view.hints:
        lines = ["> [!TIP]"] + [f"> {prose(hint)}  " for hint in view.hints]
        blocks.append("\n".join(lines) + "\n\n")
    for title, checks in (
        ("Failed", view.failed_checks),
        ("Forgiven as noise", view.forgiven_checks),
        ("Improved", view.improved_checks),
    ):
        if checks:
            blocks.append(_checks_block(title, checks))
        if title == "Failed" and view.must_pass_failures:
            blocks.append(_must_pass_block(view.must_pass_failures))
    for suite in view.suites:
        blocks += _suite_blocks(suite, view.ci_label)
    return blocks


def _checks_block(title: str, checks: Sequence[CheckRow]) -> str:
    lines = [f"**{title} ({len(checks):,})**", ""]
    for check in checks[:MAX_CHECK_LINES]:
        lines.append(f"- {check.status_icon} {code(check.id)}: {prose(check.sentence)}")
    if len(checks) > MAX_CHECK_LINES:
        lines.append(
            f"- \u2026 and {len(checks) - MAX_CHECK_LINES:,} more in the HTML report (report.html)"
        )
    return "\n".join(lines) + "\n\n"


def _must_pass_block(rows: Sequence[MustPassRow]) -> str:
    """Each failing must-pass example with its score, output and reference."""
    lines = [f"**Must-pass examples that failed ({len(rows):,})**", ""]
    for row in rows[:MAX_CHECK_LINES]:
        lines.append(
            f"- \u274c {code(row.example_id)} ({ident(row.suite)}, {ident(row.metric)}"
            f" {row.score}, needs {row.threshold})  "
        )
        lines.append(f"  output: {code(row.output)}  ")
        lines.append(f"  reference: {code(row.reference)}")
    if len(rows) > MAX_CHECK_LINES:
        lines.append(
            f"- \u2026 and {len(rows) - MAX_CHECK_LINES:,} more in the HTML report (report.html)"
        )
    return "\n".join(lines) + "\n\n"


def _suite_blocks(suite: SuiteView, ci: str) -> list[str]:
    counts = ""
    if suite.n_regressed or suite.n_improved:
        counts = f"{_SEP}{suite.n_regressed:,} regressed, {suite.n_improved:,} improved"
    new = f"{_SEP}{suite.n_new:,} new" if suite.n_new else ""
    blocks = [
        f"### {suite.verdict_icon} {ident(suite.name)}: {suite.verdict_label}\n\n"
        f"{plural(suite.n_examples, 'example')} in {code(suite.goldens)}{counts}{new}\n\n"
    ]
    if suite.notes:
        blocks.append(
            "> [!NOTE]\n" + "".join(f"> {prose(note)}  \n" for note in suite.notes) + "\n"
        )
    blocks += [f"{prose(tally)}\n\n" for tally in suite.tallies]
    if suite.error:
        blocks.append(f"**Error:** {prose(suite.error)}\n\n")
    if suite.metrics:
        lines = [
            f"| metric | baseline | current | delta | {ci} | status |",
            "|:--|--:|--:|--:|:-:|:--|",
        ]
        lines += [_metric_line(row) for row in suite.metrics]
        blocks.append("\n".join(lines) + "\n\n")
    if suite.diagnosis is not None:
        blocks.append(_why_block(suite.name, suite.diagnosis))
    if suite.moved_slices:
        shown = suite.moved_slices[:MAX_SLICES_PER_SUITE]
        lines = [
            f"**Slices that moved in {ident(suite.name)}**",
            "",
            f"| slice | n | metric | baseline | current | delta | {ci} |",
            "|:--|--:|:--|--:|--:|--:|:-:|",
        ]
        for sl in shown:
            r = sl.row
            lines.append(
                f"| {code(sl.tag, table=True)} | {sl.n_examples:,} "
                f"| {ident(r.metric, table=True)}{_lower_note(r)} | {r.baseline} "
                f"| {r.current} | {_delta(r)} | {r.interval} |"
            )
        rule = slice_rule()
        if len(suite.moved_slices) > len(shown):
            rule += (
                f" The first {len(shown):,} of {len(suite.moved_slices):,} are shown; "
                "the HTML report lists them all."
            )
        blocks.append("\n".join(lines) + f"\n\n{rule}\n\n")
    return blocks


def _why_block(name: str, why: DiagnosisView) -> str:
    """The suite's "Why": the headline, the category table, the clusters, what changed."""
    lines = [f"**Why ({ident(name)})**: {prose(why.headline)}", ""]
    rows = [row for row in why.rows if row.shown]
    if rows:
        lines += [
            "| category | blessed | current | new | regressed |",
            "|:--|--:|--:|--:|--:|",
        ]
        for row in rows:
            lines.append(f"| {ident(row.name, table=True)} | " + " | ".join(row.cells()) + " |")
        lines.append("")
    else:
        lines += [f"No failure mode found on either side ({prose(why.detectors)}).", ""]
    if why.clusters:
        lines += [f"- {prose(cluster)}" for cluster in why.clusters]
        lines.append("")
    if why.changes:
        lines += ["<details><summary>What changed since the baseline</summary>", ""]
        lines += [f"- {prose(change)}" for change in why.changes]
        lines += ["", "</details>", ""]
    return "\n".join(lines) + "\n"


def _lower_note(row: MetricRow) -> str:
    return "" if row.higher_is_better else " (lower is better)"


def _delta(row: MetricRow) -> str:
    # Bold marks a worsening in the metric's direction (a rise for TER), not a minus sign.
    if row.direction == "down":
        return f"**{row.delta}**"
    return row.delta


def _metric_line(row: MetricRow) -> str:
    status = f"{row.status_icon} {row.status_label}".strip()
    trend = f"<br><sub>blessed: {row.trend}</sub>" if row.trend else ""
    return (
        f"| {ident(row.metric, table=True)}{_lower_note(row)}{trend} | {row.baseline}"
        f" | {row.current} "
        f"| {_delta(row)} | {row.interval} | {status} |"
    )


def _examples_section(result: RunResult, budget: int, report_url: str | None) -> str:
    ranked: list[tuple[SuiteResult, Picked]] = []
    for suite in result.suites:
        worst = worst_regressed(suite)  # positions: a row is built only for a shown example
        if worst:
            ranked.append((suite, worst))
    if not ranked:
        return ""
    header = "### Worst regressed examples\n\n"
    legend = (
        "Ranked by the metric whose check failed, then the others. "
        "Word diff from the baseline output: <del>removed</del> <ins>added</ins>.\n\n"
    )
    if len(header) + len(legend) + 200 > budget:
        return ""
    parts = [header, legend]
    used = len(header) + len(legend)
    shared = shared_ids(result)
    for suite, ids in ranked:
        rank = ranking_metrics(suite)
        title = f"#### {ident(suite.name)}\n\n"
        blocks = []
        cost = len(title)
        stopped = False
        for ex in ids[:MAX_EXAMPLES_PER_SUITE]:
            row = example_row(suite, ex, rank=rank, shared=shared)
            block = _example_block(row, report_url)
            # Keep room for the closing note of this and the following suites.
            if used + cost + len(block) + 200 > budget:
                stopped = True
                break
            blocks.append(block)
            cost += len(block)
        if not blocks:
            note = (
                f"_{plural(len(ids), 'regressed example')} in {ident(suite.name)}: "
                f"see the HTML report (report.html); {EXAMPLES_FILE} has every example._\n\n"
            )
            if used + len(note) <= budget:
                parts.append(note)
                used += len(note)
            continue
        shown = len(blocks)
        note = ""
        if shown < len(ids):
            why = " (size limit)" if stopped else ""
            note = (
                f"_Showing {shown:,} of {plural(len(ids), 'regressed example')}{why}; "
                "the HTML report (report.html) has more, and "
                f"{EXAMPLES_FILE} beside result.json has every example._\n\n"
            )
        parts += [title, *blocks, note]
        used += cost + len(note)
    return "".join(parts)


def _score_text(cell: ScoreCell, first: bool) -> str:
    name = html_text(cell.metric)
    if first:
        return (
            f"{name} {fmt_points(cell.baseline)} \u2192 {fmt_points(cell.current)} "
            f"({fmt_delta(cell.delta)})"
        )
    return f"{name} {fmt_delta(cell.delta)}"


def _example_block(row: ExampleRow, report_url: str | None = None) -> str:
    label = f"<code>{html_text(clip(row.id, MAX_INLINE_CHARS)[0])}</code>"
    if report_url:
        href = html_text(f"{report_url}#{quote(row.anchor, safe='/')}").replace('"', "&quot;")
        label = f'<a href="{href}">{label}</a>'
    summary = [label]
    moved = [c for c in row.ranked if c.delta]
    if moved:
        summary.append(", ".join(_score_text(c, i == 0) for i, c in enumerate(moved[:4])))
    flips = [c.metric for c in row.scores if c.flip == "wrong"]
    if flips:
        summary.append("flipped to wrong: " + ", ".join(html_text(m) for m in flips))
    if row.categories:
        summary.append(
            "now: "
            + ", ".join(
                f"<b>{html_text(c)}</b> (new)" if c in row.new_categories else html_text(c)
                for c in row.categories
            )
        )
    if row.tags:
        tags = " ".join(
            f"<code>{html_text(clip(t, MAX_INLINE_CHARS)[0])}</code>"
            for t in row.tags[:MAX_TAGS_SHOWN]
        )
        more = f" +{len(row.tags) - MAX_TAGS_SHOWN:,}" if len(row.tags) > MAX_TAGS_SHOWN else ""
        summary.append(f"tags: {tags}{more}")
    lines = ["<details>", f"<summary>{_SEP.join(summary)}</summary>", ""]
    if row.input is not None:
        lines += ["**Input**", "", _pre(pre_clipped(row.input))]
    refs = row.references[:3]
    label = "Reference" if len(row.references) == 1 else f"References ({len(row.references)})"
    lines += [f"**{label}**", ""]
    lines += [_pre(pre_clipped(ref)) for ref in refs]
    if len(row.references) > len(refs):
        lines += [f"_\u2026 and {len(row.references) - len(refs)} more._", ""]
    if row.baseline_output is not None:
        lines += ["**Baseline output**", "", _pre(pre_clipped(row.baseline_output))]
        lines += ["**Current output** (word diff)", "", _pre(_diff_html(row.diff))]
    else:
        lines += ["**Current output** (not in the baseline)", "", _pre(pre_clipped(row.output))]
    for metric, note in row.notes:
        lines += [f"**{ident(metric)}**: {prose(note, limit=MAX_TEXT_CHARS)}", ""]
    lines += ["</details>", "", ""]
    return "\n".join(lines)


def pre_clipped(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Text for a ``<pre>`` block, clipped to ``limit`` characters with the rest counted."""
    shown, cut = clip(text, limit)
    more = f"\n\u2026 ({cut:,} more characters)" if cut else ""
    return html_text(shown, newline="\n") + more


def _diff_html(ops: Sequence[DiffOp], limit: int = MAX_TEXT_CHARS) -> str:
    out = []
    left = limit
    for i, op in enumerate(ops):
        if left <= 0:
            out.append("\n\u2026 (diff clipped)")
            break
        text, _ = clip(op.text, left)
        left -= len(text)
        body = html_text(text, newline="\n")
        if op.kind == "delete":
            out.append(f"<del>{body}</del>")
            after = ops[i + 1].text if i + 1 < len(ops) else ""
            if after and not text[-1:].isspace() and not after[:1].isspace():
                out.append(" ")  # keep "old new" from reading as one word "oldnew"
        elif op.kind == "insert":
            out.append(f"<ins>{body}</ins>")
        else:
            out.append(body)
    return "".join(out) or DASH


def _pre(body: str) -> str:
    # A blank line after </pre> ends the HTML block so the Markdown that follows is parsed.
    return f"<pre>{body}</pre>\n"


def _footer(view: ReportView) -> str:
    return (
        f"<sub>goldgate {ident(view.goldgate_version)}{_SEP}{ident(view.created_at)}"
        + (f"{_SEP}config {code(view.config)}" if view.config else "")
        + "</sub>\n"
    )
