"""What changed since the baseline, where goldgate can see it: the commits between the
baseline's last commit and HEAD and the files they touched (git), the configuration keys
whose value differs from the baseline's commit, metric signatures that differ from the
blessed ones, and the versions of goldgate, Python and key packages.

Every git call is an argument list (``io/git.py``), bounded, and its failure only leaves the
git part empty: outside a work tree there is nothing to say about commits.
"""

from __future__ import annotations

import platform
import tomllib
from collections.abc import Mapping
from importlib import metadata
from pathlib import Path
from typing import Any

from goldgate._version import __version__
from goldgate.errors import GoldgateError
from goldgate.io.git import GitFailed, file_log, git, repo_path, show
from goldgate.model.diagnosis import Changes, CommitChange

MAX_COMMITS = 20
MAX_FILES = 50
MAX_CONFIG_KEYS = 20
#: the packages whose version can move a score (or goldgate's own behaviour)
KEY_PACKAGES = ("numpy", "pydantic")


def versions(baseline_goldgate: str | None) -> dict[str, str]:
    """goldgate's version (and the baseline's, when another wrote it), Python's and the key
    packages' that are installed."""
    found = {"goldgate": __version__}
    if baseline_goldgate and baseline_goldgate != __version__:
        found["goldgate (baseline)"] = baseline_goldgate
    found["python"] = platform.python_version()
    for package in KEY_PACKAGES:
        try:
            found[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return found


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, Mapping) and value:
        for key, item in value.items():
            _flatten(item, f"{prefix}.{key}" if prefix else str(key), out)
    else:
        out[prefix] = value


def _configuration(text: str, toml: bool) -> Any:
    if toml:
        return tomllib.loads(text).get("tool", {}).get("goldgate")
    from goldgate.io.yaml import load_yaml_with_lines

    data, _ = load_yaml_with_lines(text, Path("goldgate.yaml"), GoldgateError)
    return data


def config_difference(old_text: str, new_text: str, *, toml: bool) -> list[str]:
    """The dotted keys whose value differs between two versions of the configuration."""
    try:
        old, new = _configuration(old_text, toml), _configuration(new_text, toml)
    except (GoldgateError, tomllib.TOMLDecodeError, RecursionError, AttributeError):
        return ["(the configuration at the baseline's commit could not be read)"]
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    _flatten(old, "", before)
    _flatten(new, "", after)
    keys = sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))
    if len(keys) > MAX_CONFIG_KEYS:
        return [*keys[:MAX_CONFIG_KEYS], f"(and {len(keys) - MAX_CONFIG_KEYS} more)"]
    return keys


def run_changes(
    root: Path,
    baseline: Path,
    config_source: Path | None,
    *,
    ref: str | None,
    baseline_goldgate: str | None,
) -> Changes:
    """The run's changes since the baseline (``ref``: the revision it was read at)."""
    found = versions(baseline_goldgate)
    try:
        last = file_log(root, baseline, ref=ref or "HEAD", limit=1)
    except GitFailed:
        return Changes(versions=found)
    if not last:
        return Changes(versions=found)
    base = last[-1].commit
    try:
        log = git(
            root, "log", f"--max-count={MAX_COMMITS}", "--format=%H%x00%s%x1e", f"{base}..HEAD"
        )
        count = int(git(root, "rev-list", "--count", f"{base}..HEAD").strip() or 0)
        names = git(root, "diff", "--name-only", "-z", base, "HEAD").split("\0")
    except (GitFailed, ValueError):
        return Changes(baseline_commit=base, versions=found)
    commits = []
    for entry in log.split("\x1e"):
        entry = entry.strip("\n")
        if entry:
            commit, _, subject = entry.partition("\x00")
            commits.append(CommitChange(commit=commit, subject=subject))
    files = [name for name in names if name]
    config: list[str] = []
    if config_source is not None:
        old_text: str | None
        new_text: str | None
        try:
            old_text = show(root, base, repo_path(root, config_source))
            new_text = config_source.read_text(encoding="utf-8-sig")
        except (GitFailed, OSError, UnicodeDecodeError):
            old_text = new_text = None
        if old_text is not None and new_text is not None and old_text != new_text:
            config = config_difference(old_text, new_text, toml=config_source.suffix == ".toml")
    return Changes(
        baseline_commit=base,
        commits=commits,
        more_commits=max(0, count - len(commits)),
        files=files[:MAX_FILES],
        more_files=max(0, len(files) - MAX_FILES),
        config=config,
        versions=found,
    )


def signature_changes(blessed: Mapping[str, str], current: Mapping[str, str]) -> list[str]:
    """``metric: blessed → current`` for each metric whose signature differs."""
    return [
        f"{spec}: {blessed[spec]} → {signature}"
        for spec, signature in current.items()
        if spec in blessed and blessed[spec] != signature
    ]
