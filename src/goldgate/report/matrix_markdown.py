"""The comparison of many systems as Markdown: per suite and metric a ranked table with
letter groups, the matrix of paired differences, and every pair's test.

System names and example ids come from the command line and the files: they go through
:func:`goldgate.report.markdown.ident` (a code span unless a plain identifier), as every
untrusted text in the Markdown report does.
"""

from __future__ import annotations

from goldgate.gate.many import MetricMatrix
from goldgate.pipeline.compare_many import Comparison, SuiteMatrix
from goldgate.report.formatting import DASH, fmt_delta, fmt_interval, fmt_p, fmt_points
from goldgate.report.markdown import code, ident
from goldgate.wording import plural


def render_comparison_markdown(comparison: Comparison) -> str:
    """The whole comparison as one Markdown document."""
    settings = comparison.settings
    blocks = [
        "# goldgate comparison",
        "Systems: "
        + ", ".join(
            f"{ident(name)} ({code(source)})" if name != source else code(name)
            for name, source in comparison.systems
        ),
        f"Paired bootstrap as in the gate ({settings.resamples:,} resamples, seed"
        f" {settings.seed}), on the examples the systems share. **p-values are"
        f" Holm-corrected** over the pairs of each suite and metric; a pair differs"
        f" significantly when its corrected p is below {settings.alpha:g}. Systems sharing a"
        " letter in *group* are not significantly different.",
    ]
    for suite in comparison.suites:
        for matrix in suite.metrics:
            blocks += _metric_blocks(suite, matrix, comparison)
    if comparison.notes:
        blocks.append(
            "## Notes\n\n" + "\n".join(f"- {code(note, limit=2000)}" for note in comparison.notes)
        )
    return "\n\n".join(blocks) + "\n"


def _metric_blocks(suite: SuiteMatrix, matrix: MetricMatrix, comparison: Comparison) -> list[str]:
    direction = "" if matrix.higher_is_better else " (lower is better)"
    level = f"{(1 - comparison.settings.alpha) * 100:g}%"
    heading = (
        f"## {ident(suite.suite)} · {ident(matrix.metric)}{direction}"
        f" — {plural(suite.n_examples, 'example')}"
    )
    ranking = [
        f"| rank | system | score | {level} interval | group |",
        "|---:|---|---:|---|---|",
    ]
    for row in matrix.ranking:
        interval = f"[{fmt_points(row.interval.low)}, {fmt_points(row.interval.high)}]"
        ranking.append(
            f"| {row.rank} | {ident(row.system, table=True)} | {fmt_points(row.score)}"
            f" | {interval} | {row.group} |"
        )
    ranked = [row.system for row in matrix.ranking]
    grid = [
        "| row − column | " + " | ".join(ident(s, table=True) for s in ranked) + " |",
        "|---|" + "---:|" * len(ranked),
    ]
    for row_system in ranked:
        cells = []
        for column in ranked:
            pair = matrix.pair(row_system, column)
            if pair is None:
                cells.append(DASH)
                continue
            delta = pair.delta if pair.b == row_system else -pair.delta
            mark = "*" if pair.significant else ""
            cells.append(f"{fmt_delta(delta)}{mark}")
        grid.append(f"| {ident(row_system, table=True)} | " + " | ".join(cells) + " |")
    pairs = [
        f"| pair | difference | {level} interval | p | p (Holm) | |",
        "|---|---:|---|---:|---:|---|",
    ]
    for pair in matrix.pairs:
        better = pair.better(matrix.higher_is_better)
        verdict = f"{ident(better, table=True)} better" if better else "not significant"
        pairs.append(
            f"| {ident(pair.b, table=True)} − {ident(pair.a, table=True)}"
            f" | {fmt_delta(pair.delta)} | {fmt_interval(pair.interval)} | {fmt_p(pair.p_value)}"
            f" | {fmt_p(pair.p_holm)} | {verdict} |"
        )
    return [
        heading,
        "\n".join(ranking),
        "Differences, row minus column (\\* significant after Holm's correction):",
        "\n".join(grid),
        "\n".join(pairs),
    ]
