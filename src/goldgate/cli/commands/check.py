"""``goldgate check``: validate configuration, golden sets and baseline, running no system."""

from __future__ import annotations

import argparse

from goldgate.cli.commands._common import add_config_argument, add_dask_argument, load
from goldgate.terminal import console
from goldgate.wording import plural

HELP = "Validate the configuration, golden sets and baseline without running the system."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate check``."""
    add_config_argument(parser)
    parser.add_argument(
        "--baseline-ref", metavar="REF", help="check the baseline as it is at this git revision"
    )
    add_dask_argument(parser)


def run(args: argparse.Namespace) -> int:
    """0 when everything agrees, 2 naming each problem."""
    from goldgate.runner import check

    config = load(args)
    found = check(config, baseline_ref=args.baseline_ref)
    problems = 0
    for suite in found:
        if suite.error is not None:
            problems += 1
            console.err(f"goldgate: error: {suite.error}")
            continue
        state = "matches the baseline" if suite.in_baseline else "not in the baseline yet"
        if suite.note is not None:
            state = suite.note
        if suite.unblessed:
            # "matches" would say every metric is gated against the baseline: these are not
            state += (
                f"; not blessed yet: {', '.join(suite.unblessed)} (run `goldgate bless"
                " --new-only` to add them)"
            )
        console.out(f"ok: suite {suite.suite}: {plural(suite.n_examples, 'example')}, {state}")
        for warning in suite.warnings:
            console.err(f"goldgate: warning: {warning}")
    if problems:
        have = "has" if problems == 1 else "have"
        console.err(f"goldgate check: {problems} of {plural(len(found), 'suite')} {have} problems")
        return 2
    return 0
