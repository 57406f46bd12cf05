"""``goldgate bless``: accept today's scores as the baseline."""

from __future__ import annotations

import argparse

from goldgate import console
from goldgate.commands._common import (
    add_config_argument,
    add_dask_argument,
    add_jobs_argument,
    add_quiet_argument,
    add_suite_argument,
    load,
    number,
    progress,
    table,
)

HELP = "Score the suites and write the baseline from the results (atomically)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate bless``."""
    add_config_argument(parser)
    add_suite_argument(parser)
    parser.add_argument(
        "--new-only",
        action="store_true",
        help="add only examples (and metrics) new since the last bless; keep every blessed"
        " score as it is",
    )
    add_jobs_argument(parser)
    add_dask_argument(parser)
    add_quiet_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Write the baseline and print what it now holds."""
    from goldgate.baseline import read_baseline
    from goldgate.runner import bless

    config = load(args)
    path = bless(config, new_only=args.new_only, progress=progress(args), suites=args.suites)
    baseline = read_baseline(path)
    blessed = args.suites or list(config.suites)
    console.out(f"blessed {', '.join(blessed)} into {path}")
    for name in blessed:
        suite = baseline.suites[name]
        rows = [[spec, number(m.score)] for spec, m in suite.metrics.items()]
        console.out(f"suite {name}: {suite.n_examples} examples, golden {suite.golden_hash[:19]}")
        console.out(table(["metric", "score"], rows))
    return 0
