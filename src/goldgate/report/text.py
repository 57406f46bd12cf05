"""The plain-text summary: verdict, per-suite metric table, failed and forgiven checks.

What ``goldgate run`` prints, and ``report.txt`` (``--format text``) for a CI that shows
only a log. Neutralised as console output is: no raw control character, no line that a CI
runner would read as a command.
"""

from __future__ import annotations

from goldgate.model.result import CheckStatus, RunResult
from goldgate.report.diagnosis_view import run_headline
from goldgate.report.diagnosis_view import terminal_lines as diagnosis_lines
from goldgate.report.must_pass_view import terminal_lines
from goldgate.report.sentences import budget_sentence, suite_notes
from goldgate.terminal import console
from goldgate.terminal.tables import METRIC_HEADER, metric_rows, table
from goldgate.wording import plural


def summary(result: RunResult) -> str:
    """The short plain-text summary a command prints: verdict, per-suite table, problems."""
    checks = result.checks()
    head = f"goldgate: {result.verdict.value.upper()}"
    counts = [
        f"{sum(c.status is status for c in checks)} {status.value}"
        for status in CheckStatus
        if any(c.status is status for c in checks)
    ]
    if counts:
        head += f" ({plural(len(checks), 'check')}: {', '.join(counts)})"
    if result.errors:
        head += f"; {plural(len(result.errors), 'suite')} in error"
    why = run_headline(result.suites)
    if why is not None:  # the first line says why, when the run regressed
        head += f"; {why}"
    lines = [head]
    if result.budget is not None:
        lines.append(budget_sentence(result.budget))
    for suite in result.suites:
        lines.append("")
        lines.append(
            f"suite {suite.name}: {suite.verdict.value} ({plural(suite.n_examples, 'example')})"
        )
        lines += [f"  note: {note}" for note in suite_notes(suite)]
        if suite.error:
            lines.append(f"  error: {suite.error}")
            continue
        lines.append(table(METRIC_HEADER, metric_rows(suite.metrics)))
        lines += diagnosis_lines(suite)
        for check in suite.checks:
            if check.status in (CheckStatus.FAIL, CheckStatus.FORGIVEN, CheckStatus.IMPROVED):
                lines.append(f"  {check.status.value.upper()}: {check.message}")
                if check.status is CheckStatus.FAIL and check.must_pass is not None:
                    lines += terminal_lines(check)
    for hint in result.hints:
        lines.append(f"hint: {hint}")
    return "\n".join(lines)


def render_text(result: RunResult) -> str:
    """The summary as a file: neutralised, ending in a newline."""
    return console.clean(summary(result)) + "\n"
