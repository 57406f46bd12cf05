"""Must-pass examples formatted for every report: which example broke which contract, its
score, output and reference.

The texts are the model's and the golden set's, untrusted: each renderer escapes them as it
escapes any example (Markdown's ``code``, Jinja2's autoescape, XML, the console).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from goldgate.model.result import CheckResult, CheckStatus, RunResult
from goldgate.report.formatting import clip

#: characters of an output or reference shown in the terminal (the reports show more)
TERMINAL_CHARS = 300


@dataclass(frozen=True)
class MustPassRow:
    """One selected example of one must-pass rule, formatted."""

    check_id: str
    suite: str
    metric: str
    example_id: str
    passed: bool
    score: str
    #: ``>= 100.00`` or ``<= 20.00``
    threshold: str
    #: the failing example's outputs joined (one per sample), "" when it passed
    output: str
    reference: str


def rows_of(check: CheckResult) -> list[MustPassRow]:
    """Every example a must-pass check selected, in golden order."""
    outcome = check.must_pass
    if outcome is None:
        return []
    bound = ">=" if check.higher_is_better else "<="
    rows = []
    for example in outcome.examples:
        outputs = example.outputs or []
        output = (
            outputs[0]
            if len(outputs) == 1
            else "\n".join(f"[sample {k}] {text}" for k, text in enumerate(outputs, start=1))
        )
        references = example.references or []
        reference = (
            references[0]
            if len(references) == 1
            else "\n".join(f"[{k}] {text}" for k, text in enumerate(references, start=1))
        )
        rows.append(
            MustPassRow(
                check_id=check.id,
                suite=check.suite,
                metric=check.metric,
                example_id=example.id,
                passed=example.passed,
                score=f"{example.score:.2f}",
                threshold=f"{bound} {check.threshold:.2f}",
                output=output,
                reference=reference,
            )
        )
    return rows


def failing_rows(result: RunResult) -> tuple[MustPassRow, ...]:
    """The must-pass examples that failed, over every suite."""
    return tuple(
        row
        for check in result.checks()
        if check.status is CheckStatus.FAIL
        for row in rows_of(check)
        if not row.passed
    )


def terminal_lines(check: CheckResult, indent: str = "    ") -> list[str]:
    """The lines a command prints under a failed must-pass check: each failing example."""
    lines = []
    for row in rows_of(check):
        if row.passed:
            continue
        lines.append(f"{indent}{row.example_id}: {row.metric} {row.score}, needs {row.threshold}")
        lines.append(f"{indent}  output:    {_one_line(row.output)}")
        lines.append(f"{indent}  reference: {_one_line(row.reference)}")
    return lines


def _one_line(text: str) -> str:
    shown, cut = clip(text, TERMINAL_CHARS)
    # repr-like newlines: one example, one line each (the console escapes the rest)
    shown = shown.replace("\\", "\\\\").replace("\n", "\\n")
    return shown + (f"… ({cut:,} more characters)" if cut else "")


def junit_cases(check: CheckResult) -> Sequence[MustPassRow]:
    """The test cases JUnit lists for a must-pass check: one per selected example."""
    return rows_of(check)
