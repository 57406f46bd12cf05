"""``goldgate score``: ad hoc scoring of a JSONL file or line-aligned text files."""

from __future__ import annotations

import argparse
import gc
import json
import math
from pathlib import Path
from typing import Any

from goldgate.errors import MetricError, UsageError
from goldgate.io.score_rows import ScoringData, read_jsonl, read_text_files
from goldgate.io.user_code import importable_from
from goldgate.metrics.batch import MetricContext
from goldgate.metrics.engine import MetricResult, score_corpus
from goldgate.metrics.registry import metric_from_spec
from goldgate.terminal import console

HELP = "Score candidates against references with any metrics (no gate, no baseline)."

EPILOG = """\
input, one of:
  DATA.jsonl                    rows {"candidate": "...", "references": ["...", ...]}
                                (and "input", which llm_judge may show its judge)
  --hyps HYP.txt --refs REF.txt one candidate per line; each --refs file gives one
                                reference per line (repeat --refs for several)

metric specs: a name with optional settings after a colon, e.g.
  bleu  bleu:tokenize=intl,smooth_method=floor  chrf  rougeLsum:use_stemmer=true
  exact_match:normalizer=squad  token_f1:normalizer=lower+nfkc  length_ratio
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate score``."""
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = EPILOG
    parser.add_argument("data", nargs="?", type=Path, metavar="DATA.jsonl", help="rows to score")
    parser.add_argument("--hyps", type=Path, metavar="HYP.txt", help="candidates, one per line")
    parser.add_argument(
        "--refs",
        type=Path,
        action="append",
        default=[],
        metavar="REF.txt",
        help="references, line-aligned with --hyps (repeat for several)",
    )
    parser.add_argument(
        "--metric",
        dest="metrics",
        action="append",
        required=True,
        metavar="SPEC",
        help="a metric spec such as bleu or rougeL:use_stemmer=true (repeat for several)",
    )
    parser.add_argument(
        "--per-example",
        action="store_true",
        help="also give every example's sentence-level score, in input order",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--cache-dir",
        type=Path,
        default=Path(".goldgate"),
        metavar="DIR",
        help="where embedding_similarity and llm_judge keep their caches (default .goldgate)",
    )


def _read(args: argparse.Namespace) -> ScoringData:
    if args.data is not None:
        if args.hyps is not None or args.refs:
            raise UsageError("give either DATA.jsonl or --hyps with --refs, not both")
        return read_jsonl(args.data)
    if args.hyps is None or not args.refs:
        raise UsageError("nothing to score: give DATA.jsonl, or --hyps HYP.txt with --refs REF.txt")
    return read_text_files(args.hyps, args.refs)


def results_json(results: list[MetricResult], *, per_example: bool) -> dict[str, Any]:
    """The ``--json`` document: ``{"metrics": {spec: {score, signature, components,
    higher_is_better}}}``."""
    metrics: dict[str, Any] = {}
    for result in results:
        score = result.corpus_score()
        entry: dict[str, Any] = {
            "score": score.score,
            "signature": score.signature,
            "components": score.components,
            # An error rate such as TER is better lower: scripts need not know every metric.
            "higher_is_better": result.metric.higher_is_better,
        }
        if per_example:
            entry["per_example"] = result.per_example()
        metrics[result.spec] = entry
    return {"metrics": metrics}


def _json_default(value: Any) -> Any:
    # Components computed with NumPy arrive as numpy scalars or arrays.
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"{type(value).__name__} is not JSON serialisable")


def _table(rows: list[list[str]], right: set[int]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for row in rows:
        cells = [
            cell.rjust(width) if i in right else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def format_table(results: list[MetricResult], *, per_example: bool) -> str:
    """A readable summary: one row per metric (spec, score, signature)."""
    rows = [["metric", "score", "signature"]]
    for result in results:
        score = result.corpus_score()
        rows.append([result.spec, f"{score.score:.2f}", score.signature])
    text = _table(rows, right={1})
    if per_example:
        columns = [result.per_example() for result in results]
        example_rows = [["example", *(result.spec for result in results)]]
        for index, values in enumerate(zip(*columns, strict=True), start=1):
            example_rows.append([str(index), *(f"{value:.2f}" for value in values)])
        text += "\n\n" + _table(example_rows, right=set(range(len(results) + 1)))
    return text


#: inputs smaller than this are scored without a progress bar (it would only flicker)
PROGRESS_FROM = 5000


def _score(
    metrics: list[tuple[str, Any]], data: ScoringData, context: MetricContext
) -> list[MetricResult]:
    """Score, with a progress bar on stderr when it is a terminal and the input is large."""
    import sys

    def score(advance: Any = None) -> list[MetricResult]:
        return score_corpus(
            metrics,
            data.candidates,
            data.references,
            inputs=data.inputs,
            context=context,
            advance=advance,
        )

    if len(data.candidates) < PROGRESS_FROM or not sys.stderr.isatty():
        return score()
    from goldgate.terminal.progress import BarProgress

    bar = BarProgress(sys.stderr)
    bar.start(len(data.candidates) * len(metrics), "score")
    try:
        return score(bar.advance)
    finally:
        bar.finish()


def run(args: argparse.Namespace) -> int:
    """Score the input with every ``--metric`` in one pass and print the result."""
    specs = list(dict.fromkeys(args.metrics))  # a repeated spec is scored once
    # ``--metric mymod:fn`` imports from the working directory, as a configuration's
    # metrics import from its folder.
    importable_from(Path.cwd())
    metrics = [(spec, metric_from_spec(spec, where=f"--metric {spec}: ")) for spec in specs]
    # Reading and scoring allocate many small objects that live to the end and form no
    # cycles (rows, tokens, n-gram counters); the cyclic collector would walk them over and
    # over, about a tenth of the run time, to free nothing.
    gc.disable()
    try:
        data = _read(args)
        results = _score(metrics, data, MetricContext(root=Path.cwd(), cache_dir=args.cache_dir))
    finally:
        gc.enable()
    if args.json:
        document = results_json(results, per_example=args.per_example)
        try:
            text = json.dumps(document, ensure_ascii=False, default=_json_default, allow_nan=False)
        except ValueError:  # a plugin metric's NaN or infinity: JSON has no spelling for it
            bad = [r.spec for r in results if not math.isfinite(r.corpus_score().score)]
            raise MetricError(
                f"--metric {', '.join(bad) or 'a metric'}: a score is not a finite number"
                " (NaN or infinity), which JSON cannot hold"
            ) from None
        console.out(console.json_text(text))
    else:
        console.out(format_table(results, per_example=args.per_example))
    return 0
