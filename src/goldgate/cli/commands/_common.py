"""Helpers shared by the commands: the --config option, progress and plain-text tables."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from goldgate.metrics import PARALLEL_MIN_EXAMPLES
from goldgate.wording import plural

if TYPE_CHECKING:
    from goldgate.model.config import Config
    from goldgate.model.result import Interval, MetricSummary, RunResult
    from goldgate.terminal.progress import ProgressReporter


def add_config_argument(parser: argparse.ArgumentParser) -> None:
    """``-c/--config PATH``: the configuration file (default: goldgate.yaml or pyproject.toml)."""
    parser.add_argument(
        "-c",
        "--config",
        type=Path,
        metavar="PATH",
        help="configuration file (default: goldgate.yaml here, else [tool.goldgate] in"
        " pyproject.toml)",
    )


def add_suite_argument(parser: argparse.ArgumentParser) -> None:
    """``--suite NAME`` (repeatable): limit the command to some suites."""
    parser.add_argument(
        "--suite",
        dest="suites",
        action="append",
        metavar="NAME",
        help="only this suite (repeat for several)",
    )


def add_quiet_argument(parser: argparse.ArgumentParser) -> None:
    """``-q/--quiet``: no progress display."""
    parser.add_argument("-q", "--quiet", action="store_true", help="show no progress")


def add_jobs_argument(parser: argparse.ArgumentParser) -> None:
    """``--jobs N``: scoring processes (overrides ``engine.jobs``)."""
    parser.add_argument(
        "-j",
        "--jobs",
        type=_positive_int,
        metavar="N",
        help="score with N processes (default: engine.jobs, else every core for"
        f" {PARALLEL_MIN_EXAMPLES:,} examples or more); the numbers do not depend on it",
    )


def add_dask_argument(parser: argparse.ArgumentParser) -> None:
    """``--dask ADDRESS``: score, run a callable system and read globs/URLs on a Dask cluster."""
    parser.add_argument(
        "--dask",
        metavar="ADDRESS",
        help="score, run a callable system and read golden sets or predictions given as globs"
        " or URLs on the Dask cluster at ADDRESS (tcp://host:8786; 'local' starts one here);"
        " needs goldgate[dask]",
    )


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(f"expected 1 to 1024, got {value}")
    return value


def add_no_cache_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-cache``: call the system for every example, reusing and recording nothing."""
    parser.add_argument(
        "--no-cache",
        dest="no_cache",
        action="store_true",
        help="call the system for every example: reuse no cached output and record none",
    )


def load(args: argparse.Namespace) -> Config:
    """The configuration named by ``--config``, or found in the current directory.

    ``--jobs`` and ``--dask``, where the command has them, override ``engine``.
    """
    from goldgate.model.config_loading import load_config

    path: Path | None = getattr(args, "config", None)
    config = load_config(path)
    jobs: int | None = getattr(args, "jobs", None)
    if jobs is not None:
        config = config.model_copy(
            update={"engine": config.engine.model_copy(update={"jobs": jobs})}
        )
    dask: str | None = getattr(args, "dask", None)
    if dask is not None:
        from goldgate.model.config import DaskConfig

        # the address from the command line, the rest of engine.dask from the file
        configured = config.engine.dask
        cluster = (
            DaskConfig(address=dask)
            if configured is None
            else configured.model_copy(update={"address": dask})
        )
        engine = config.engine.model_copy(update={"dask": cluster})
        config = config.model_copy(update={"engine": engine})
    if getattr(args, "no_cache", False):
        config = config.without_cache()
    return config


def progress(args: argparse.Namespace) -> ProgressReporter:
    """A progress display on stderr (a bar on a terminal, plain lines in CI), or none."""
    from goldgate.terminal.progress import NullProgress, make_progress

    if getattr(args, "quiet", False):
        return NullProgress()
    return make_progress(sys.stderr)


def number(value: float | None) -> str:
    """A score in points for a table, or a dash."""
    return "-" if value is None else f"{value:.2f}"


def signed(value: float | None) -> str:
    """A delta in points for a table, or a dash."""
    return "-" if value is None else f"{value:+.2f}"


def interval(value: Interval | None) -> str:
    """A confidence interval for a table, or a dash."""
    return "-" if value is None else f"[{value.low:+.2f}, {value.high:+.2f}]"


def table(header: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "  ") -> str:
    """A left-aligned first column and right-aligned numbers, padded to the widest cell."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]
    lines = []
    for row in [header, *rows]:
        cells = [
            cell.ljust(widths[i]) if i == 0 else cell.rjust(widths[i]) for i, cell in enumerate(row)
        ]
        lines.append(indent + "  ".join(cells).rstrip())
    return "\n".join(lines)


def metric_rows(metrics: Sequence[MetricSummary]) -> list[list[str]]:
    """Rows of metric, baseline, current, delta and interval."""
    return [
        [m.label, number(m.baseline), m.current_text(number), signed(m.delta), interval(m.interval)]
        for m in metrics
    ]


METRIC_HEADER = ["metric", "baseline", "current", "delta", "interval"]


def summary(result: RunResult) -> str:
    """The short plain-text summary a command prints: verdict, per-suite table, problems."""
    from goldgate.model.result import CheckStatus
    from goldgate.report.diagnosis_view import run_headline, terminal_lines
    from goldgate.report.sentences import suite_notes

    checks = result.checks()
    head = f"goldgate: {result.verdict.value.upper()}"
    counts = [
        f"{sum(c.status is status for c in checks)} {status.value}"
        for status in CheckStatus
        if any(c.status is status for c in checks)
    ]
    if counts:
        head += f" ({plural(len(checks), 'check')}: {', '.join(counts)})"
    if result.errors:
        head += f"; {plural(len(result.errors), 'suite')} in error"
    why = run_headline(result.suites)
    if why is not None:  # the first line says why, when the run regressed
        head += f"; {why}"
    lines = [head]
    for suite in result.suites:
        lines.append("")
        lines.append(
            f"suite {suite.name}: {suite.verdict.value} ({plural(suite.n_examples, 'example')})"
        )
        lines += [f"  note: {note}" for note in suite_notes(suite)]
        if suite.error:
            lines.append(f"  error: {suite.error}")
            continue
        lines.append(table(METRIC_HEADER, metric_rows(suite.metrics)))
        lines += terminal_lines(suite)
        for check in suite.checks:
            if check.status in (CheckStatus.FAIL, CheckStatus.FORGIVEN, CheckStatus.IMPROVED):
                lines.append(f"  {check.status.value.upper()}: {check.message}")
    for hint in result.hints:
        lines.append(f"hint: {hint}")
    return "\n".join(lines)


def github_mode(args: argparse.Namespace) -> bool:
    """GitHub mode: asked for with ``--github``, or on by itself inside GitHub Actions."""
    import os

    return bool(getattr(args, "github", False)) or os.environ.get("GITHUB_ACTIONS") == "true"


def prepare_github() -> None:
    """Before anything else in GitHub mode: the token redacted and masked, the files checked.

    The ``::add-mask::`` line is written only inside GitHub Actions (``GITHUB_ACTIONS=true``),
    where the runner consumes it; anywhere else it would print the token.
    """
    import os

    from goldgate.github.pull_request import GitHubEnvironment
    from goldgate.terminal import console

    env = GitHubEnvironment.from_environ(os.environ)
    if env.token:
        console.add_secret(env.token)
        if os.environ.get("GITHUB_ACTIONS") == "true":
            console.mask(env.token)
    env.check_files()


def publish_to_github(
    result: RunResult, report_dir: Path, *, comment: bool, root: Path | None = None
) -> None:
    """Job summary, step outputs, sticky comment; annotations go to stdout for the runner.

    ``root`` is the project root (golden paths in the result are relative to it); None means
    the current directory.
    """
    import os

    from goldgate.github.pull_request import CommentOutcome, GitHubEnvironment, publish, report_url
    from goldgate.report.markdown import render_markdown
    from goldgate.terminal import console

    env = GitHubEnvironment.from_environ(os.environ)
    outcome = publish(
        result,
        render_markdown(result, report_url=report_url(os.environ)),
        env,
        report_dir=report_dir,
        comment=comment,
        root=root if root is not None else Path.cwd(),
    )
    for line in outcome.annotations:
        console.command(line)
    if outcome.comment is not None and outcome.comment.outcome in (
        CommentOutcome.CREATED,
        CommentOutcome.UPDATED,
    ):
        console.out(f"goldgate: pull-request comment {outcome.comment.outcome.value}")
    elif outcome.comment is not None:
        console.err(f"goldgate: no pull-request comment: {outcome.comment.detail}")
