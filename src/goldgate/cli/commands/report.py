"""``goldgate report RESULT.json``: re-render a saved result in another format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldgate.cli.commands._common import prepare_github, publish_to_github
from goldgate.errors import InputError, UsageError
from goldgate.model.result import RunResult
from goldgate.report import FORMATS, render, write_text_atomic
from goldgate.terminal import console

HELP = (
    "Re-render a saved result (result.json) as Markdown, HTML, JUnit XML, JSON, plain text or"
    " OpenMetrics."
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("result", type=Path, metavar="RESULT.json", help="a saved result")
    parser.add_argument(
        "--format",
        "-f",
        dest="formats",
        action="append",
        choices=FORMATS,
        help="output format (default: md); repeat for several, which are written as"
        " report.md, report.html, junit.xml, result.json, report.txt, metrics.txt into --output,"
        " a directory",
    )
    parser.add_argument(
        "--output",
        "-o",
        default=None,
        metavar="FILE|DIR|-",
        help="where to write the report (default: - for standard output; with several"
        " formats a directory, by default the result's own)",
    )
    parser.add_argument(
        "--github",
        action="store_true",
        help="also publish the result in GitHub mode (job summary, outputs, annotations and"
        " the sticky pull-request comment): the trusted half of the workflow_run recipe",
    )
    parser.add_argument(
        "--no-comment",
        dest="comment",
        action="store_false",
        help="with --github, do not post or update the pull-request comment",
    )


def run(args: argparse.Namespace) -> int:
    """Render the result; exits 0 whatever its verdict (rendering is not gating)."""
    if args.github:
        prepare_github()
    result = RunResult.from_json_file(args.result)
    if args.github:
        publish_to_github(result, args.result.parent, comment=args.comment)
    formats = list(dict.fromkeys(args.formats or ["md"]))
    if len(formats) > 1:
        return _write_several(result, formats, args)
    text = render(result, formats[0])
    if args.output is None or args.output == "-":
        safe = console.json_text(text) if formats[0] == "json" else console.clean(text)
        with console.reader_may_leave():
            sys.stdout.buffer.write(safe.encode("utf-8"))
            sys.stdout.flush()
        return 0
    out = Path(args.output)
    if not out.parent.is_dir():
        raise InputError(f"{out}: directory {out.parent} does not exist")
    try:
        write_text_atomic(out, text)
    except OSError as exc:
        raise InputError(f"{out}: cannot write report: {exc.strerror}") from None
    return 0


def _write_several(result: RunResult, formats: list[str], args: argparse.Namespace) -> int:
    """Several formats: each into its usual file name in one directory."""
    from goldgate.report import FILENAMES, write_reports

    if args.output == "-":
        raise UsageError("several --format values cannot all go to standard output: give -o DIR")
    directory = Path(args.output) if args.output is not None else args.result.parent
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: with several formats, --output names a directory")
    # Re-rendering a result into its own directory must not rewrite the result itself.
    same = (directory / FILENAMES["json"]).resolve() == args.result.resolve()
    wanted = [fmt for fmt in formats if not (fmt == "json" and same)]
    try:
        paths = write_reports(result, directory, wanted)
    except OSError as exc:
        raise InputError(f"{directory}: cannot write the reports: {exc.strerror or exc}") from None
    for path in paths:
        console.out(f"wrote {path}")
    return 0
