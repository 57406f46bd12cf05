"""The plan stage: which suites run, their golden sets, and the paths results name."""

from __future__ import annotations

import glob
from collections.abc import Sequence
from pathlib import Path

from goldgate.errors import (
    UsageError,
)
from goldgate.execution.registry import backend_for
from goldgate.model.config import Config
from goldgate.model.goldens import (
    GoldenSet,
    is_dataset,
)


def load_suite_goldens(config: Config, name: str) -> GoldenSet:
    """A suite's golden set, read by the configured backend: its file read here, or a
    glob/URL read on the Dask cluster."""
    return backend_for(config.engine).read_goldens(config, name)


def goldens_label(config: Config, name: str) -> str:
    """The golden set as results and the baseline name it: a URL as written, else a path."""
    suite = config.suites[name]
    return suite.goldens_url or relative_path(suite.goldens, config.root)


def own_files(config: Config) -> list[Path]:
    """goldgate's own files: editing them does not change the system under test."""
    own = [config.baseline, config.report.dir, config.cache_dir]
    for suite in config.suites.values():
        # a glob's files, each (a URL names no file of the project)
        many = is_dataset(suite.goldens_location) and suite.goldens_url is None
        own += [Path(p) for p in glob.glob(str(suite.goldens))] if many else [suite.goldens]
    if config.source is not None:
        own.append(config.source)
    return own


def select_suites(config: Config, suites: Sequence[str] | None) -> list[str]:
    """The names of the chosen suites (all when None), in configuration order."""
    if suites is None:
        return list(config.suites)
    from goldgate.errors import did_you_mean

    for name in suites:
        if name not in config.suites:
            hint = did_you_mean(name, list(config.suites))
            raise UsageError(
                f"no suite {name!r} in {config.source or 'the configuration'}{hint};"
                f" suites: {', '.join(config.suites)}"
            )
    return [name for name in config.suites if name in set(suites)]


def relative_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()
