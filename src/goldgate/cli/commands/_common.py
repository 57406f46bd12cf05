"""Helpers shared by the commands: the --config option, progress and plain-text tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from goldgate.metrics import PARALLEL_MIN_EXAMPLES

# the commands' table helpers, kept in terminal/ (cheap to import, shared with report/)
from goldgate.terminal.tables import number as number
from goldgate.terminal.tables import signed as signed
from goldgate.terminal.tables import table as table

if TYPE_CHECKING:
    from goldgate.model.config import Config
    from goldgate.model.result import RunResult
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

    from goldgate.forge.sticky import CommentOutcome
    from goldgate.github.pull_request import GitHubEnvironment, publish, report_url
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


def gitlab_mode(args: argparse.Namespace) -> bool:
    """GitLab mode: asked for with ``--gitlab``, or on by itself inside GitLab CI."""
    import os

    return bool(getattr(args, "gitlab", False)) or os.environ.get("GITLAB_CI") == "true"


def prepare_gitlab() -> None:
    """Before anything else in GitLab mode: the token redacted from all output.

    GitLab masks a masked CI/CD variable in the job log itself (it has no command to mask a
    value at run time); goldgate redacts the token from everything it writes as well.
    """
    import os

    from goldgate.terminal import console

    console.add_secret(os.environ.get("GOLDGATE_GITLAB_TOKEN") or None)


def publish_to_gitlab(
    result: RunResult, report_dir: Path, *, note: bool, root: Path | None = None
) -> None:
    """The JUnit and metrics artifacts, then the sticky merge-request note (or a warning)."""
    import os

    from goldgate.forge.sticky import CommentOutcome
    from goldgate.gitlab.merge_request import GitLabEnvironment, publish
    from goldgate.report.markdown import render_markdown
    from goldgate.terminal import console

    env = GitLabEnvironment.from_environ(os.environ)
    outcome = publish(
        result,
        render_markdown(result),
        env,
        report_dir=report_dir,
        note=note,
        root=root if root is not None else Path.cwd(),
    )
    for path in outcome.artifacts:
        console.out(f"goldgate: GitLab report artifact {console.inline(str(path))}")
    if outcome.note is None or outcome.note.outcome is CommentOutcome.NOT_A_PULL_REQUEST:
        return
    if outcome.note.outcome in (CommentOutcome.CREATED, CommentOutcome.UPDATED):
        where = f": {console.inline(outcome.note.url)}" if outcome.note.url else ""
        console.out(f"goldgate: merge-request note {outcome.note.outcome.value}{where}")
    else:
        console.err(
            f"goldgate: warning: no merge-request note ({outcome.note.detail}); the report is"
            " in this job's log and artifacts"
        )


def read_saved_document(path: Path) -> tuple[str, dict[str, Any]]:
    """A saved result or baseline file: its text and its JSON object; ``InputError``
    naming the file when it is missing, not UTF-8, not JSON or not an object."""
    from goldgate.errors import InputError
    from goldgate.io.inputs import json_problem, loads_json, read_regular

    try:
        text = read_regular(path, InputError, what="result or baseline").decode("utf-8")
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not UTF-8 (byte {exc.start})") from None
    document = loads_json(text, str(path), InputError, allow_duplicates=True, describe=json_problem)
    if not isinstance(document, dict):
        raise InputError(f"{path}: not a goldgate result or baseline (not a JSON object)")
    return text, document
