"""``goldgate compare A B C ...``: the systems read or run, the matrix printed and written."""

from __future__ import annotations

import argparse
from pathlib import Path

from goldgate.cli.commands._common import read_saved_document, table
from goldgate.errors import InputError
from goldgate.model.config import Config
from goldgate.pipeline.compare_many import Comparison, SystemSide
from goldgate.terminal import console
from goldgate.wording import p_value, plural

#: the files ``--out DIR`` writes
OUT_FILES = {"md": "compare.md", "html": "compare.html", "json": "compare.json"}


def run_matrix(args: argparse.Namespace) -> int:
    """Read or run every system, print the matrix, write it with ``--out``; 0 on success."""
    from goldgate.cli.commands._common import load, progress
    from goldgate.pipeline.compare_many import compare_sides, settings_of

    given = _short_labels([_split(text) for text in args.systems])
    needs_config = args.config is not None or any(path is None for _, _, path in given)
    notes: list[str] = []
    config = load(args) if needs_config else _config_here(args, notes)
    sides: list[SystemSide] = []
    recorded = []
    for label, target, path in given:
        if path is None:
            sides.append(_configured(config, label, target, progress(args), args.suites))
            continue
        side, settings = _read(path, label, config, notes, args.suites)
        sides.append(side)
        recorded.append(settings)
    comparison = compare_sides(sides, settings_of(config, recorded), notes, args.suites)
    if args.json:
        from goldgate.report.matrix_json import render_comparison_json

        console.out(console.json_text(render_comparison_json(comparison).rstrip("\n")))
    else:
        console.out(terminal_text(comparison))
    if args.out is not None:
        written = write_comparison(comparison, args.out)
        if not args.json:
            console.out("written: " + ", ".join(str(path) for path in written))
    return 0


def _split(text: str) -> tuple[str, str, Path | None]:
    """``NAME=PATH`` or ``PATH`` or a configured name → (label, target, path or None)."""
    label, sep, target = text.partition("=")
    if not sep or Path(text).exists():  # a file whose own path holds "="
        label, target = text, text
    if not label or not target:
        from goldgate.errors import UsageError

        raise UsageError(f"{text!r}: expected NAME=PATH, a result.json, a baseline or a name")
    path = Path(target)
    if path.exists() or "/" in target or target.endswith(".json"):
        return label, target, path
    return label, target, None


def _short_labels(given: list[tuple[str, str, Path | None]]) -> list[tuple[str, str, Path | None]]:
    """``runs/model-a/result.json`` is labelled ``model-a`` (its directory) when no other
    system would have the same label; a ``NAME=`` label is kept as given."""
    labels = [
        path.resolve().parent.name
        if path is not None and label == target and path.name == "result.json"
        else label
        for label, target, path in given
    ]
    if len(set(labels)) != len(labels) or not all(labels):
        return given
    return [(label, target, path) for label, (_, target, path) in zip(labels, given, strict=True)]


def _config_here(args: argparse.Namespace, notes: list[str]) -> Config | None:
    """The configuration of the current directory, when there is one: its metric options
    rebuild the saved results' metrics, its significance settings are the gate's. One that
    does not load is left aside with a note: results compare without it."""
    from goldgate.cli.commands._common import load
    from goldgate.errors import ConfigError
    from goldgate.model.config_loading import CONFIG_FILENAMES

    if not any((Path.cwd() / name).is_file() for name in CONFIG_FILENAMES):
        return None
    try:
        return load(args)
    except ConfigError as exc:
        notes.append(f"the configuration here was not used: {exc}")
        return None


def _configured(
    config: Config | None,
    label: str,
    name: str,
    progress: object,
    only: list[str] | None,
) -> SystemSide:
    from goldgate.pipeline.compare_many import run_config_system

    if config is None or name not in config.systems:
        known = ", ".join(config.systems) if config is not None and config.systems else "none"
        raise InputError(
            f"{name}: no such file, nor a system in the configuration's systems: (its"
            f" systems: {known})"
        )
    side = run_config_system(config, name, progress, only)
    side.name = label
    return side


def _read(
    path: Path, label: str, config: Config | None, notes: list[str], only: list[str] | None
) -> tuple[SystemSide, object]:
    """A result or a baseline, told apart by its schema version; its recorded significance."""
    from goldgate.model.baseline import BASELINE_SCHEMA_VERSIONS
    from goldgate.pipeline.compare_many import read_baseline_side, read_result_side

    text, document = read_saved_document(path)
    if document.get("schema_version") in BASELINE_SCHEMA_VERSIONS:
        return read_baseline_side(path, text, label, config, notes, only), None
    side = read_result_side(path, label, config, notes, only)
    from goldgate.model.result import SignificanceSettings

    recorded = document.get("significance")
    settings = SignificanceSettings.model_validate(recorded) if recorded else None
    return side, settings


def write_comparison(comparison: Comparison, directory: Path) -> list[Path]:
    """compare.md, compare.html and compare.json into ``directory`` (made if absent)."""
    from goldgate.io.atomic import write_text_atomic
    from goldgate.report.matrix_html import render_comparison_html
    from goldgate.report.matrix_json import render_comparison_json
    from goldgate.report.matrix_markdown import render_comparison_markdown

    rendered = {
        "md": render_comparison_markdown(comparison),
        "html": render_comparison_html(comparison),
        "json": render_comparison_json(comparison),
    }
    try:
        directory.mkdir(parents=True, exist_ok=True)
        paths = []
        for fmt, text in rendered.items():
            path = directory / OUT_FILES[fmt]
            write_text_atomic(path, text)
            paths.append(path)
    except OSError as exc:
        raise InputError(f"{directory}: cannot write the comparison: {exc.strerror}") from None
    return paths


def _points(value: float) -> str:
    return f"{value:.2f}"


def terminal_text(comparison: Comparison) -> str:
    """The matrix for the terminal: per suite and metric the ranking, then every pair."""
    settings = comparison.settings
    lines = ["systems:"]
    lines += [
        f"  {name}: {source}" if name != source else f"  {name}"
        for name, source in comparison.systems
    ]
    level = f"{(1 - settings.alpha) * 100:g}%"
    lines.append(
        f"paired bootstrap: {settings.resamples} resamples, seed {settings.seed};"
        f" p-values Holm-corrected over the pairs of each suite and metric;"
        f" significant: p (Holm) < {settings.alpha:g}"
    )
    for suite in comparison.suites:
        for matrix in suite.metrics:
            label = (
                matrix.metric if matrix.higher_is_better else f"{matrix.metric} (lower is better)"
            )
            lines.append(f"\nsuite {suite.suite} · {label} ({plural(suite.n_examples, 'example')})")
            rows = [
                [
                    str(row.rank),
                    row.system,
                    _points(row.score),
                    f"[{_points(row.interval.low)}, {_points(row.interval.high)}]",
                    row.group,
                ]
                for row in matrix.ranking
            ]
            lines.append(table(["rank", "system", "score", f"{level} interval", "group"], rows))
            pairs = [
                [
                    f"{pair.b} - {pair.a}",
                    f"{pair.delta:+.2f}",
                    f"[{pair.interval.low:+.2f}, {pair.interval.high:+.2f}]",
                    p_value(pair.p_value),
                    p_value(pair.p_holm),
                    (pair.better(matrix.higher_is_better) or "")
                    + (" better" if pair.significant else "not significant"),
                ]
                for pair in matrix.pairs
            ]
            lines.append(table(["pair", "delta", f"{level} interval", "p", "p (Holm)", ""], pairs))
    for note in comparison.notes:
        lines.append(f"note: {note}")
    return "\n".join(lines)
