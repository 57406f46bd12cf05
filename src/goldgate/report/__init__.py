"""Reports of a gate run: Markdown, HTML, JUnit XML, JSON, plain text and OpenMetrics, all
rendered from a RunResult.

Reporters only display: the verdict and every check status are decided before rendering.
The same result renders to the same bytes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from goldgate.errors import ConfigError, did_you_mean
from goldgate.io.atomic import write_bytes_atomic, write_text_atomic
from goldgate.model.examples_file import EXAMPLES_FILE
from goldgate.model.result import RunResult

#: format name -> file written by write_reports
FILENAMES: dict[str, str] = {
    "md": "report.md",
    "html": "report.html",
    "json": "result.json",
    "junit": "junit.xml",
    "text": "report.txt",
    "metrics": "metrics.txt",
}
FORMATS = tuple(FILENAMES)


def _renderer(fmt: str) -> Callable[[RunResult], str]:
    # Imported on demand: Jinja2 is loaded only when HTML is asked for.
    if fmt == "md":
        from goldgate.report.markdown import render_markdown

        return render_markdown
    if fmt == "html":
        from goldgate.report.html import render_html

        return render_html
    if fmt == "junit":
        from goldgate.report.junit import render_junit

        return render_junit
    if fmt == "text":
        from goldgate.report.text import render_text

        return render_text
    if fmt == "metrics":
        from goldgate.report.openmetrics import render_openmetrics

        return render_openmetrics
    if fmt == "json":
        return RunResult.to_json
    raise ConfigError(
        f"unknown report format {fmt!r}{did_you_mean(fmt, FORMATS)}; choose from "
        + ", ".join(FORMATS)
    )


def render(result: RunResult, fmt: str) -> str:
    """Render a result in one format: ``md``, ``html``, ``json``, ``junit``, ``text`` or
    ``metrics``."""
    return _renderer(fmt)(result)


def write_reports(
    result: RunResult, directory: Path, formats: Sequence[str], *, threads: int = 1
) -> list[Path]:
    """Write each format's report into ``directory``; returns the paths written, in order.

    ``json`` writes ``result.json`` and, beside it, its examples in ``examples.jsonl.gz``
    (compressed in a thread of its own when ``threads`` is above 1).
    Every format is rendered before any file is written, so a rendering error leaves the
    directory as it was; each file is replaced atomically.
    """
    wanted = list(dict.fromkeys(formats))
    rendered: list[tuple[str, str | bytes]] = []
    for fmt in wanted:
        if fmt == "json":
            # result.json stays small: its examples go to a compressed side file beside it.
            text, examples = result.to_files(EXAMPLES_FILE, threads=threads)
            rendered += [(FILENAMES[fmt], text), (EXAMPLES_FILE, examples)]
        else:
            rendered.append((FILENAMES.get(fmt, fmt), _renderer(fmt)(result)))
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, content in rendered:
        path = directory / name
        if isinstance(content, bytes):
            write_bytes_atomic(path, content)
        else:
            write_text_atomic(path, content)
        paths.append(path)
    return paths


__all__ = ["FILENAMES", "FORMATS", "render", "write_reports", "write_text_atomic"]
