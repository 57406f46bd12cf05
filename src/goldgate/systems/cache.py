"""The on-disk cache of system outputs in ``.goldgate/cache/``: written as outputs arrive.

One append-only JSONL file per (suite, system identity); one line per output, keyed by the
example's id, a hash of its input and the sample index. Each line is written with a single
``write`` on an ``O_APPEND`` descriptor straight to the kernel (no user-space buffer), so an
output survives the process being interrupted, killed or crashing right after it arrived; a
line cut short by a kill mid-write is ignored on read and fenced off by a newline before the
next append. (An output survives the process, not a power cut: there is no fsync per line.)

Modes (``system.cache``):

- ``resume`` (default): outputs are reused only to finish an interrupted run. When a run has
  obtained every output, its file is moved aside to ``<name>.last.jsonl``, so the next run
  calls the system afresh — a regression gate must not score yesterday's outputs.
- ``reuse``: outputs of any earlier run with the same system identity are reused.
- ``off``: nothing is read or written.

The identity holds the system's settings, a fingerprint of its code (``code``, see
:mod:`goldgate.systems.fingerprint`) and the user's ``cache_key``. An unfinished file of the same
system under another code or key is not resumed: it is set aside as ``<name>.stale.jsonl``
and :attr:`OutputCache.stale` says how many outputs were dropped and why.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from goldgate.errors import GoldgateError
from goldgate.io.atomic import locked

CacheMode = Literal["resume", "reuse", "off"]
CACHE_FORMAT = 1
_GITIGNORE = "# created by goldgate: the cache is local\n*\n"


def canonical_json(value: Any) -> str:
    """One spelling of a JSON value: sorted keys, no spaces, UTF-8 kept as is."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def input_hash(value: Any) -> str:
    """A short, stable hash of an example's input."""
    return hashlib.sha256(canonical_json(value).encode("utf-8")).hexdigest()[:32]


def identity_digest(identity: Mapping[str, Any]) -> str:
    """The hex digest naming a system identity (its cache file, its runs in result.json)."""
    return hashlib.sha256(canonical_json(dict(identity)).encode("utf-8")).hexdigest()


CacheKey = tuple[str, str, int]  # (example id, input hash, sample index)

#: identity keys that say which code and outside state produced the outputs
_VERSION_KEYS = ("code", "cache_key")


@dataclass(frozen=True)
class StaleCache:
    """An unfinished cache of the same system under other code, not resumed."""

    outputs: int
    reason: str
    path: Path


class OutputCache:
    """Outputs of one system on one suite, read at start and appended as they arrive."""

    def __init__(
        self,
        cache_dir: Path,
        suite: str,
        identity: Mapping[str, Any],
        *,
        mode: CacheMode = "resume",
    ) -> None:
        self.mode = mode
        self.identity = dict(identity)
        digest = identity_digest(self.identity)
        self.directory = cache_dir / "cache"
        self.path = self.directory / f"{suite}-{digest[:16]}.jsonl"
        self.last_path = self.directory / f"{suite}-{digest[:16]}.last.jsonl"
        self._entries: dict[CacheKey, str] = {}
        self._fd: int | None = None
        self._lock = threading.Lock()
        #: when the outputs being resumed were first cached (ISO 8601), if known
        self.since: str | None = None
        self.stale: StaleCache | None = None
        if mode != "off":
            self._entries = read_entries(self.path)
            if self._entries:
                self.since = _created_at(self.path)
            self.stale = self._set_aside_stale(suite)

    def _set_aside_stale(self, suite: str) -> StaleCache | None:
        # Files of this suite whose system is the same but for its code or cache_key.
        same = {k: v for k, v in self.identity.items() if k not in _VERSION_KEYS}
        found: StaleCache | None = None
        pattern = re.compile(re.escape(suite) + r"-[0-9a-f]{16}\.jsonl")
        for path in sorted(self.directory.glob(f"{suite}-*.jsonl")):
            if path == self.path or not pattern.fullmatch(path.name):
                continue
            header = _header(path)
            other = header.get("system") if header else None
            if not isinstance(other, dict):
                continue
            if {k: v for k, v in other.items() if k not in _VERSION_KEYS} != same:
                continue
            entries = read_entries(path)
            aside = path.with_name(path.name.removesuffix(".jsonl") + ".stale.jsonl")
            with contextlib.suppress(OSError):
                os.replace(path, aside)
            if entries:
                found = StaleCache(len(entries), _why_changed(other, self.identity), aside)
        return found

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: CacheKey) -> str | None:
        """The cached output for (id, input hash, sample), if any."""
        return self._entries.get(key)

    def put(self, key: CacheKey, output: str) -> None:
        """Record an output; it is on disk (in the kernel) when this returns."""
        record_id, digest, sample = key
        self._entries[key] = output
        if self.mode == "off":
            return
        line = canonical_json(
            {"id": record_id, "input": digest, "sample": sample, "output": output}
        )
        self._append((line + "\n").encode("utf-8"))

    def complete(self) -> None:
        """Every output was obtained: in resume mode, move the file aside for the next run."""
        self.close()
        if self.mode == "resume" and self.path.exists():
            try:
                with locked(self.directory):  # not while another run writes its header
                    os.replace(self.path, self.last_path)
            except OSError as exc:
                raise GoldgateError(
                    f"{self.path}: cannot move the finished cache aside: {exc.strerror or exc}"
                ) from None

    def close(self) -> None:
        """Close the file (outputs already written stay)."""
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def _append(self, data: bytes) -> None:
        with self._lock:
            try:
                if self._fd is None:
                    with locked(self.directory):  # one header, even for two runs at once
                        self._fd = self._open()
                _write_all(self._fd, data)
            except OSError as exc:
                raise GoldgateError(
                    f"{self.path}: cannot write the output cache: {exc.strerror or exc} "
                    "(set system.cache: off to run without it)"
                ) from None

    def _open(self) -> int:
        self.directory.mkdir(parents=True, exist_ok=True)
        gitignore = self.directory.parent / ".gitignore"
        if not gitignore.exists():
            with contextlib.suppress(OSError):
                gitignore.write_text(_GITIGNORE, encoding="utf-8")
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        size = os.fstat(fd).st_size
        if size == 0:
            now = datetime.now(UTC).isoformat(timespec="seconds")
            header = {"goldgate_cache": CACHE_FORMAT, "system": self.identity, "created_at": now}
            _write_all(fd, (canonical_json(header) + "\n").encode("utf-8"))
        elif _last_byte(self.path, size) != b"\n":
            # A kill mid-write left half a line: end it, so the next entry starts clean.
            _write_all(fd, b"\n")
        return fd


def keep_for_resume(cache_dir: Path, suite: str, identity_hex: str) -> None:
    """Put a finished cache of ``suite`` (system identity digest ``identity_hex``) back where
    the next run resumes it: its outputs were obtained, but the run stopped before scoring
    them (on its budget), so they have not been scored yet. Never replaces a newer file."""
    directory = cache_dir / "cache"
    path = directory / f"{suite}-{identity_hex[:16]}.jsonl"
    last = directory / f"{suite}-{identity_hex[:16]}.last.jsonl"
    with contextlib.suppress(OSError), locked(directory):
        if last.exists() and not path.exists():
            os.replace(last, path)


def read_entries(path: Path) -> dict[CacheKey, str]:
    """The entries of a cache file; damaged or partial lines are skipped, later lines win."""
    entries: dict[CacheKey, str] = {}
    try:
        data = path.read_bytes()
    except OSError:  # missing or unreadable: nothing to reuse (a write would say why)
        return entries
    for raw in data.split(b"\n"):
        try:
            item = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(item, dict):
            continue
        record_id, digest = item.get("id"), item.get("input")
        sample, output = item.get("sample"), item.get("output")
        if (
            isinstance(record_id, str)
            and isinstance(digest, str)
            and isinstance(sample, int)
            and isinstance(output, str)
        ):
            entries[(record_id, digest, sample)] = output
    return entries


def _header(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("rb") as handle:
            first = handle.readline()
        item = json.loads(first)
    except (OSError, ValueError):
        return None
    return item if isinstance(item, dict) and "goldgate_cache" in item else None


def _created_at(path: Path) -> str | None:
    header = _header(path)
    value = header.get("created_at") if header else None
    if isinstance(value, str):
        return value
    try:  # a file written before headers carried a time
        stamp = path.stat().st_mtime
    except OSError:
        return None
    return datetime.fromtimestamp(stamp, UTC).isoformat(timespec="seconds")


def _why_changed(old: Mapping[str, Any], new: Mapping[str, Any]) -> str:
    from goldgate.systems.fingerprint import fingerprint_change

    if old.get("cache_key") != new.get("cache_key"):
        return f"cache_key changed from {old.get('cache_key')!r} to {new.get('cache_key')!r}"
    before, after = old.get("code"), new.get("code")
    if isinstance(before, dict) and isinstance(after, dict):
        return fingerprint_change(before, after) or "the code changed"
    return "the code changed"


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _last_byte(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)
