"""The comparison of many systems as one self-contained HTML page: per suite and metric the
ranking, the heat map of paired differences, every pair's test, and a pair selector showing
the examples the chosen pair differs most on.

Like the run report it loads nothing and runs no script: the Content Security Policy allows
only its inline style (by hash); the pair selector is links to each pair's section, shown
by CSS ``:target``. Jinja2 autoescapes every value and control characters are shown escaped
(the report environment's ``finalize``). The heat map's colours are a blue–orange scale
that readers with the common colour-vision deficiencies tell apart, with dark text on every
tint; each cell also says ▲, ▼ or ≈, so nothing is told by colour alone.
"""

from __future__ import annotations

from typing import Any

from goldgate._version import __version__
from goldgate.gate.many import MetricMatrix
from goldgate.model.result import gain
from goldgate.pipeline.compare_many import Comparison, SuiteMatrix
from goldgate.report.formatting import fmt_delta, fmt_interval, fmt_p, fmt_points
from goldgate.report.html import _csp_hash, environment


def _heat(matrix: MetricMatrix) -> list[dict[str, Any]]:
    """Rows and cells of the heat map, systems in rank order: row minus column."""
    ranked = [row.system for row in matrix.ranking]
    better = matrix.higher_is_better
    largest = max((abs(pair.delta) for pair in matrix.pairs if pair.significant), default=0.0)
    rows = []
    for row_system in ranked:
        cells: list[dict[str, Any]] = []
        for column in ranked:
            pair = matrix.pair(row_system, column)
            if pair is None:
                cells.append({"self": True})
                continue
            delta = pair.delta if pair.b == row_system else -pair.delta
            if pair.significant:
                ahead = gain(delta, better) > 0
                level = 1 + min(2, int(3 * abs(delta) / largest)) if largest else 1
                css = f"h-{'better' if ahead else 'worse'}-{level}"
                mark = "▲" if ahead else "▼"
            else:
                css, mark = "h-same", "≈"
            cells.append(
                {
                    "self": False,
                    "css": css,
                    "mark": mark,
                    "delta": fmt_delta(delta),
                    "title": f"{row_system} − {column}: {fmt_delta(delta)},"
                    f" p = {fmt_p(pair.p_value)}, Holm {fmt_p(pair.p_holm)}",
                }
            )
        rows.append({"system": row_system, "cells": cells})
    return rows


def _metric_view(index: int, suite: SuiteMatrix, matrix: MetricMatrix) -> dict[str, Any]:
    anchor = f"m{index}"
    pairs = []
    for number, pair in enumerate(matrix.pairs):
        better = pair.better(matrix.higher_is_better)
        examples = suite.examples.get((matrix.metric, pair.a, pair.b), [])
        pairs.append(
            {
                "a": pair.a,
                "b": pair.b,
                "anchor": f"{anchor}-p{number}",
                "delta": fmt_delta(pair.delta),
                "interval": fmt_interval(pair.interval),
                "p": fmt_p(pair.p_value),
                "p_holm": fmt_p(pair.p_holm),
                "verdict": f"{better} better" if better else "not significant",
                "examples": [
                    {
                        "id": e.id,
                        "input": e.input,
                        "references": e.references,
                        "output_a": e.output_a,
                        "output_b": e.output_b,
                        "score_a": fmt_points(e.score_a),
                        "score_b": fmt_points(e.score_b),
                    }
                    for e in examples
                ],
            }
        )
    return {
        "anchor": anchor,
        "suite": suite.suite,
        "metric": matrix.metric,
        "signature": matrix.signature,
        "higher_is_better": matrix.higher_is_better,
        "n_examples": suite.n_examples,
        "ranking": [
            {
                "rank": row.rank,
                "system": row.system,
                "score": fmt_points(row.score),
                "interval": f"[{fmt_points(row.interval.low)}, {fmt_points(row.interval.high)}]",
                "group": row.group,
            }
            for row in matrix.ranking
        ],
        "ranked": [row.system for row in matrix.ranking],
        "heat": _heat(matrix),
        "pairs": pairs,
    }


def render_comparison_html(comparison: Comparison) -> str:
    """The page's HTML."""
    env = environment()
    style = env.get_template("style.css.j2").render() + env.get_template("matrix.css.j2").render()
    csp = (
        "default-src 'none'; script-src 'none'; "
        f"style-src {_csp_hash(style)}; img-src data:; base-uri 'none'; form-action 'none'"
    )
    metrics: list[dict[str, Any]] = []
    for suite in comparison.suites:
        for matrix in suite.metrics:
            metrics.append(_metric_view(len(metrics), suite, matrix))
    settings = comparison.settings
    return env.get_template("matrix.html.j2").render(
        style=style,
        csp=csp,
        version=__version__,
        systems=comparison.systems,
        resamples=settings.resamples,
        seed=settings.seed,
        alpha=f"{settings.alpha:g}",
        level=f"{(1 - settings.alpha) * 100:g}%",
        metrics=metrics,
        notes=comparison.notes,
    )
