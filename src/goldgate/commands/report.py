"""``goldgate report RESULT.json``: re-render a saved result in another format."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from goldgate import console
from goldgate.commands._common import prepare_github, publish_to_github
from goldgate.errors import InputError
from goldgate.report import FORMATS, render, write_text_atomic
from goldgate.result import RunResult

HELP = "Re-render a saved result (result.json) as Markdown, HTML, JUnit XML or JSON."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the command's arguments."""
    parser.add_argument("result", type=Path, metavar="RESULT.json", help="a saved result")
    parser.add_argument(
        "--format", "-f", choices=FORMATS, default="md", help="output format (default: md)"
    )
    parser.add_argument(
        "--output",
        "-o",
        default="-",
        metavar="FILE|-",
        help="where to write the report (default: - for standard output)",
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
    text = render(result, args.format)
    if args.output == "-":
        safe = console.json_text(text) if args.format == "json" else console.clean(text)
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
