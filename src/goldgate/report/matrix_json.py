"""The comparison of many systems (``goldgate compare A B C``) as one JSON document.

Numbers are written as computed (not rounded): a pair's ``p_value`` is the gate's own
bootstrap p-value for that pair, ``p_holm`` the same after Holm's correction over the pairs
of its suite and metric.
"""

from __future__ import annotations

import json
from typing import Any

from goldgate.model.result import Interval
from goldgate.pipeline.compare_many import Comparison

#: the document's version, for readers that check it
COMPARE_SCHEMA_VERSION = "goldgate.compare/1"


def _interval(interval: Interval) -> dict[str, float]:
    return {"low": interval.low, "high": interval.high, "level": interval.level}


def _finite(value: float) -> float | None:
    """JSON has no NaN or infinity: an overflowing custom metric's score is null."""
    return value if value == value and abs(value) != float("inf") else None


def comparison_document(comparison: Comparison) -> dict[str, Any]:
    """The comparison as plain data: systems, settings, then per suite and metric the
    ranking and every pair (with the examples the two differ most on)."""
    settings = comparison.settings
    suites: dict[str, Any] = {}
    for suite in comparison.suites:
        metrics: dict[str, Any] = {}
        for matrix in suite.metrics:
            metrics[matrix.metric] = {
                "signature": matrix.signature,
                "higher_is_better": matrix.higher_is_better,
                "ranking": [
                    {
                        "rank": row.rank,
                        "system": row.system,
                        "score": _finite(row.score),
                        "interval": _interval(row.interval),
                        "group": row.group,
                    }
                    for row in matrix.ranking
                ],
                "pairs": [
                    {
                        "a": pair.a,
                        "b": pair.b,
                        "delta": _finite(pair.delta),
                        "interval": _interval(pair.interval),
                        "p_value": pair.p_value,
                        "p_holm": pair.p_holm,
                        "significant": pair.significant,
                        "better": pair.better(matrix.higher_is_better),
                        "examples": [
                            {
                                "id": example.id,
                                "input": example.input,
                                "references": example.references,
                                "output_a": example.output_a,
                                "output_b": example.output_b,
                                "score_a": example.score_a,
                                "score_b": example.score_b,
                            }
                            for example in suite.examples.get((matrix.metric, pair.a, pair.b), [])
                        ],
                    }
                    for pair in matrix.pairs
                ],
            }
        suites[suite.suite] = {
            "golden_hash": suite.golden_hash,
            "n_examples": suite.n_examples,
            "metrics": metrics,
        }
    return {
        "schema_version": COMPARE_SCHEMA_VERSION,
        "systems": [{"name": name, "source": source} for name, source in comparison.systems],
        "significance": {
            "method": "paired_bootstrap",
            "resamples": settings.resamples,
            "alpha": settings.alpha,
            "seed": settings.seed,
            "correction": "holm",
            "correction_family": "the pairs of one suite and metric",
        },
        "suites": suites,
        "notes": comparison.notes,
    }


def render_comparison_json(comparison: Comparison) -> str:
    """The document as indented JSON, ending with a newline."""
    return json.dumps(comparison_document(comparison), indent=2, ensure_ascii=False) + "\n"
