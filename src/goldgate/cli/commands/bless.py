"""``goldgate bless``: review today's scores against the baseline, then accept them."""

from __future__ import annotations

import argparse

from goldgate.cli.commands._common import (
    add_config_argument,
    add_dask_argument,
    add_jobs_argument,
    add_no_cache_argument,
    add_quiet_argument,
    add_suite_argument,
    load,
    progress,
)
from goldgate.terminal import console

HELP = (
    "Score the suites, show them against the baseline, and write the baseline from them"
    " (refusing a regression unless --allow-regression)."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate bless``."""
    add_config_argument(parser)
    add_suite_argument(parser)
    parser.add_argument(
        "--new-only",
        action="store_true",
        help="add only examples (and metrics) new since the last bless; keep every blessed"
        " score as it is, and call the system for the new examples only",
    )
    add_jobs_argument(parser)
    add_dask_argument(parser)
    parser.add_argument(
        "--allow-regression",
        action="store_true",
        help="accept scores that fail a gate check (a drop beyond the gate, a missed min);"
        " the baseline records that the bless was forced",
    )
    parser.add_argument(
        "--rerun",
        action="store_true",
        help="call the system again instead of reusing the outputs of the run just reviewed"
        " (result.json in the report directory)",
    )
    add_no_cache_argument(parser)
    add_quiet_argument(parser)


def run(args: argparse.Namespace) -> int:
    """0 when the baseline was written, 1 when a regression refused it."""
    from goldgate.runner import bless_reviewed

    config = load(args)
    outcome = bless_reviewed(
        config,
        new_only=args.new_only,
        progress=progress(args),
        suites=args.suites,
        allow_regression=args.allow_regression,
        rerun=args.rerun or args.no_cache,
    )
    from goldgate.report.text import summary

    console.out(summary(outcome.review))
    blessed = ", ".join(suite.name for suite in outcome.review.suites)
    if not outcome.written:
        failed = sum(len(messages) for messages in outcome.failed.values())
        console.err(
            f"goldgate: bless refused: {failed} gate check{'s' if failed != 1 else ''} failed"
            f" in {', '.join(outcome.failed)}; the baseline {outcome.path} is unchanged. Fix"
            " the regression, or accept it with `goldgate bless --allow-regression` (the"
            " baseline then records the bless as forced)"
        )
        return 1
    forced = f" (forced past {', '.join(outcome.failed)})" if outcome.failed else ""
    console.out(f"blessed {blessed} into {outcome.path}{forced}")
    return 0
