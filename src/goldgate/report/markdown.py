"""The Markdown report: a GitHub PR comment and job summary, under GitHub's size limit.

Model and golden text is untrusted. On a Markdown line every character that Markdown or HTML
could act on is written as a numeric character reference, which both show as the literal
character and never as syntax; an ``@`` is followed by a zero-width space so GitHub links no
mention. Long texts sit in ``<pre>`` blocks, where GitHub runs no Markdown, autolinking or
emoji, so only ``< > &`` need escaping there; the word diff adds only ``<del>`` and ``<ins>``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from goldgate.report.diff import DiffOp
from goldgate.report.view import (
    DASH,
    ExampleRow,
    MetricRow,
    ReportView,
    SuiteView,
    build_view,
    clip,
    example_row,
    fmt_delta,
    fmt_points,
    worst_regressed,
)
from goldgate.result import RunResult, SuiteResult

#: the hidden marker a later run looks for to update its own comment
MARKER = "<!-- goldgate-report -->"
#: GitHub rejects a comment of 65,536 characters; keep room for a caller's own lines
MAX_CHARS = 60_000
#: worst regressed examples shown per suite (fewer when the size budget runs out)
MAX_EXAMPLES_PER_SUITE = 10
#: characters of one text (reference, output) shown per example
MAX_TEXT_CHARS = 1_200
MAX_SLICES_PER_SUITE = 20
MAX_CHECK_LINES = 40
MAX_ERROR_CHARS = 2_000

# ASCII characters that mean something to inline Markdown, to GitHub's extensions (tables,
# strikethrough, math, URL autolinks) or to HTML. Those that only matter at a line start are
# handled there.
_INLINE_ACTIVE = frozenset("\\`*_{}[]()<>#!|~$:&\"'")
_LINE_START = re.compile(r"\s*(?:[-+=>]|\d+[.)])")
# Inside <pre> GitHub runs no Markdown: only HTML and mentions need care.
_BLOCK_ACTIVE = frozenset("<>&")
_ZWSP = "&#8203;"
_SEP = " \u00b7 "


def _escape(text: str, active: frozenset[str], newline: str) -> str:
    out = []
    for ch in text.replace("\r\n", "\n").replace("\r", "\n"):
        if ch in active:
            out.append(f"&#{ord(ch)};")
        elif ch == "@":
            out.append("@" + _ZWSP)
        elif ch == "\n":
            out.append(newline)
        elif ch == "\t" or (ch >= " " and ch != "\x7f" and ch not in "\u2028\u2029"):
            out.append(ch)
        else:
            out.append("\ufffd")
    return "".join(out)


def escape(text: str) -> str:
    """Make untrusted text literal on one line of GitHub Markdown or inside an HTML block."""
    match = _LINE_START.match(text)
    if not match:
        return _escape(text, _INLINE_ACTIVE, " ")
    k = match.end() - 1
    return (
        _escape(text[:k], _INLINE_ACTIVE, " ")
        + f"&#{ord(text[k])};"
        + _escape(text[k + 1 :], _INLINE_ACTIVE, " ")
    )


def escape_block(text: str) -> str:
    """Make untrusted text literal inside a ``<pre>`` block, keeping its lines."""
    return _escape(text, _BLOCK_ACTIVE, "\n")


def code(text: str) -> str:
    """Untrusted text in a ``<code>`` span."""
    return f"<code>{escape(text)}</code>"


def render_markdown(result: RunResult, *, max_chars: int = MAX_CHARS) -> str:
    """Render the Markdown report; never longer than ``max_chars``."""
    view = build_view(result)
    head = _head(view)
    tail = _footer(view)
    budget = max_chars - len(tail)
    if len(head) > budget:
        head = _cut(head, budget)
        return head + tail
    examples = _examples_section(result, budget - len(head))
    return head + examples + tail


def _cut(text: str, budget: int) -> str:
    # The fixed part is line-based Markdown (tables, lists), so a cut at a line end leaves
    # valid Markdown; the verdict is in the first lines and survives any cut.
    note = "\n_\u2026 truncated to fit a comment; the HTML report has everything._\n\n"
    end = text.rfind("\n", 0, max(0, budget - len(note)))
    return text[: max(end, 0)] + note


def _head(view: ReportView) -> str:
    lines = [MARKER, f"## {view.verdict_icon} goldgate: {view.verdict_label}", ""]
    lines += [escape(view.headline), ""]
    meta = []
    if view.baseline:
        found = "" if view.baseline_found else " (not found: no baseline comparison)"
        meta.append(f"baseline {code(view.baseline)}{found}")
    if view.significance:
        meta.append(escape(view.significance))
    else:
        meta.append("significance off: plain thresholds")
    lines += [" \u00b7 ".join(meta), ""]
    if view.errors:
        lines += ["> [!CAUTION]", "> **Errors**"]
        for err in view.errors:
            text, cut = clip(err, MAX_ERROR_CHARS)
            more = f" \u2026 ({cut:,} more characters)" if cut else ""
            lines.append(f"> - {escape(text)}{more}")
        lines.append("")
    if view.hints:
        lines += ["> [!TIP]"] + [f"> {escape(hint)}  " for hint in view.hints] + [""]
    flagged = [*view.failed_checks, *view.forgiven_checks]
    if flagged:
        lines.append("**Checks that failed or were forgiven as noise**")
        lines.append("")
        for check in flagged[:MAX_CHECK_LINES]:
            lines.append(f"- {check.status_icon} {code(check.id)}: {escape(check.message)}")
        if len(flagged) > MAX_CHECK_LINES:
            lines.append(f"- \u2026 and {len(flagged) - MAX_CHECK_LINES:,} more")
        lines.append("")
    for suite in view.suites:
        lines += _suite_section(suite, view.ci_label)
    return "\n".join(lines) + "\n"


def _suite_section(suite: SuiteView, ci: str) -> list[str]:
    lines = [
        f"### {suite.verdict_icon} {code(suite.name)}: {suite.verdict_label}",
        "",
        f"{suite.n_examples:,} examples in {code(suite.goldens)}"
        + (
            f" \u00b7 {suite.n_regressed:,} regressed, {suite.n_improved:,} improved"
            if suite.n_regressed or suite.n_improved
            else ""
        )
        + (f" \u00b7 {suite.n_new:,} new" if suite.n_new else ""),
        "",
    ]
    if suite.error:
        text, cut = clip(suite.error, MAX_ERROR_CHARS)
        more = f" \u2026 ({cut:,} more characters)" if cut else ""
        lines += [f"**Error:** {escape(text)}{more}", ""]
    if suite.metrics:
        lines += [
            f"| metric | baseline | current | delta | {ci} | status |",
            "|:--|--:|--:|--:|:-:|:--|",
        ]
        lines += [_metric_line(row) for row in suite.metrics]
        lines.append("")
    if suite.moved_slices:
        shown = suite.moved_slices[:MAX_SLICES_PER_SUITE]
        lines += [
            "**Slices that moved**",
            "",
            f"| slice | n | metric | baseline | current | delta | {ci} |",
            "|:--|--:|:--|--:|--:|--:|:-:|",
        ]
        for sl in shown:
            r = sl.row
            lines.append(
                f"| {code(sl.tag)} | {sl.n_examples:,} | {escape(r.metric)}{_lower_note(r)} "
                f"| {r.baseline} "
                f"| {r.current} | {_delta(r)} | {r.interval} |"
            )
        if len(suite.moved_slices) > len(shown):
            lines += ["", f"_\u2026 and {len(suite.moved_slices) - len(shown):,} more._"]
        lines.append("")
    return lines


def _lower_note(row: MetricRow) -> str:
    return "" if row.higher_is_better else " (lower is better)"


def _delta(row: MetricRow) -> str:
    # Bold marks a worsening in the metric's direction (a rise for TER), not a minus sign.
    if row.direction == "down":
        return f"**{row.delta}**"
    return row.delta


def _metric_line(row: MetricRow) -> str:
    status = f"{row.status_icon} {row.status_label}".strip()
    return (
        f"| {escape(row.metric)}{_lower_note(row)} | {row.baseline} | {row.current} "
        f"| {_delta(row)} | {row.interval} | {status} |"
    )


def _examples_section(result: RunResult, budget: int) -> str:
    ranked: list[tuple[SuiteResult, list[str]]] = []
    for suite in result.suites:
        worst = worst_regressed(suite)
        if worst:
            ranked.append((suite, [ex.id for ex in worst]))
    if not ranked:
        return ""
    header = "### Worst regressed examples\n\n"
    legend = "Word diff from the baseline output: <del>removed</del> <ins>added</ins>.\n\n"
    parts = [header, legend]
    used = len(header) + len(legend)
    for suite, ids in ranked:
        by_id = {ex.id: ex for ex in suite.examples}
        title = f"#### {code(suite.name)}\n\n"
        blocks = []
        cost = len(title)
        stopped = False
        for ex_id in ids[:MAX_EXAMPLES_PER_SUITE]:
            block = _example_block(example_row(suite, by_id[ex_id]))
            # Keep room for the closing note of this and the following suites.
            if used + cost + len(block) + 200 > budget:
                stopped = True
                break
            blocks.append(block)
            cost += len(block)
        if not blocks:
            note = f"_{len(ids):,} regressed examples in {code(suite.name)}: see the HTML report._"
            if used + len(note) + 2 <= budget:
                parts.append(note + "\n\n")
                used += len(note) + 2
            continue
        shown = len(blocks)
        note = ""
        if shown < len(ids):
            why = " (size limit)" if stopped else ""
            note = (
                f"_Showing {shown:,} of {len(ids):,} regressed examples{why}; "
                "the HTML report has all._\n\n"
            )
        parts += [title, *blocks, note]
        used += cost + len(note)
    return "".join(parts)


def _example_block(row: ExampleRow) -> str:
    summary = [code(row.id)]
    if row.worst is not None:
        w = row.worst
        summary.append(
            f"{escape(w.metric)} {fmt_points(w.baseline)} \u2192 {fmt_points(w.current)} "
            f"({fmt_delta(w.delta)})"
        )
    flips = [c.metric for c in row.scores if c.flip == "wrong"]
    if flips:
        summary.append("flipped to wrong: " + ", ".join(escape(m) for m in flips))
    if row.tags:
        summary.append("tags: " + " ".join(code(t) for t in row.tags[:5]))
    lines = ["<details>", f"<summary>{_SEP.join(summary)}</summary>", ""]
    refs = row.references[:3]
    label = "Reference" if len(row.references) == 1 else f"References ({len(row.references)})"
    lines += [f"**{label}**", ""]
    lines += [_pre(escape_clipped(ref)) for ref in refs]
    if len(row.references) > len(refs):
        lines += [f"_\u2026 and {len(row.references) - len(refs)} more._", ""]
    if row.baseline_output is not None:
        lines += ["**Baseline output**", "", _pre(escape_clipped(row.baseline_output))]
        lines += ["**Current output** (word diff)", "", _pre(_diff_html(row.diff))]
    else:
        lines += ["**Current output** (not in the baseline)", "", _pre(escape_clipped(row.output))]
    lines += ["</details>", "", ""]
    return "\n".join(lines)


def escape_clipped(text: str, limit: int = MAX_TEXT_CHARS) -> str:
    """Escape text for a ``<pre>`` block, clipped to ``limit`` characters."""
    shown, cut = clip(text, limit)
    more = f"\n\u2026 ({cut:,} more characters)" if cut else ""
    return escape_block(shown) + more


def _diff_html(ops: Sequence[DiffOp], limit: int = MAX_TEXT_CHARS) -> str:
    out = []
    left = limit
    for i, op in enumerate(ops):
        if left <= 0:
            out.append("\n\u2026 (diff clipped)")
            break
        text, _ = clip(op.text, left)
        left -= len(text)
        body = escape_block(text)
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
        f"<sub>goldgate {escape(view.goldgate_version)} \u00b7 {escape(view.created_at)}"
        + (f" \u00b7 config {code(view.config)}" if view.config else "")
        + "</sub>\n"
    )
