"""``goldgate run``: score every suite, gate it against thresholds and the baseline, report."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldgate.cli.commands._common import (
    add_config_argument,
    add_dask_argument,
    add_jobs_argument,
    add_no_cache_argument,
    add_quiet_argument,
    add_suite_argument,
    github_mode,
    gitlab_mode,
    load,
    prepare_github,
    prepare_gitlab,
    progress,
    publish_to_github,
    publish_to_gitlab,
)
from goldgate.terminal import console

HELP = "Score the suites, compare them with the baseline and write the reports."

#: report/__init__.py's FORMATS, named here so that ``--help`` imports no report module
FORMATS = ("md", "html", "json", "junit", "text", "metrics")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate run``."""
    add_config_argument(parser)
    add_suite_argument(parser)
    parser.add_argument(
        "--baseline-ref",
        metavar="REF",
        help="read the baseline as it is at this git revision (in a pull request: the merge"
        " base), so a change to the baseline file is not compared with itself; working-tree"
        " (the default) reads the file on disk",
    )
    parser.add_argument(
        "--anchor-ref",
        metavar="REF",
        help="measure max_drift from the baseline at this git revision (a release tag),"
        " instead of the configured anchor",
    )
    parser.add_argument(
        "--report-dir", type=Path, metavar="DIR", help="write reports here (default: report.dir)"
    )
    parser.add_argument(
        "--format",
        dest="formats",
        action="append",
        choices=FORMATS,
        help="report format (repeat for several; default: report.formats); result.json is"
        " always written",
    )
    parser.add_argument(
        "--json", action="store_true", help="print the full result as JSON instead of a summary"
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="GitHub mode (on by itself when GITHUB_ACTIONS=true): job summary, step outputs,"
        " annotations and one sticky pull-request comment",
    )
    parser.add_argument(
        "--gitlab",
        action="store_true",
        help="GitLab mode (on by itself when GITLAB_CI=true): JUnit and metrics report"
        " artifacts and one merge-request note, written with GOLDGATE_GITLAB_TOKEN",
    )
    parser.add_argument(
        "--no-comment",
        dest="comment",
        action="store_false",
        help="in GitHub or GitLab mode, do not post or update the pull-request comment or"
        " merge-request note",
    )
    add_jobs_argument(parser)
    add_dask_argument(parser)
    add_no_cache_argument(parser)
    add_quiet_argument(parser)


def run(args: argparse.Namespace) -> int:
    """Run the gate; 0 pass or improved, 1 regressed, 2 error."""
    from goldgate.pipeline.record import RESULT_FILENAME
    from goldgate.runner import run as run_gate

    if github_mode(args):
        prepare_github()
    if gitlab_mode(args):
        prepare_gitlab()
    config = load(args)
    if args.report_dir is not None:
        directory = (
            args.report_dir if args.report_dir.is_absolute() else Path.cwd() / args.report_dir
        )
        config = config.model_copy(
            update={"report": config.report.model_copy(update={"dir": directory})}
        )
    result = run_gate(
        config,
        baseline_ref=args.baseline_ref,
        progress=progress(args),
        suites=args.suites,
        report_formats=args.formats,
        anchor_ref=args.anchor_ref,
    )
    if args.json:
        with console.reader_may_leave():
            sys.stdout.write(console.json_text(result.to_json()))
            sys.stdout.flush()
    else:
        from goldgate.report.text import summary

        console.out(summary(result))
        console.out(f"result: {config.report.dir / RESULT_FILENAME}")
    for error in result.errors:
        console.err(f"goldgate: error: {error}")
    if github_mode(args):
        publish_to_github(result, config.report.dir, comment=args.comment, root=config.root)
    if gitlab_mode(args):
        publish_to_gitlab(result, config.report.dir, note=args.comment, root=config.root)
    return result.exit_code
