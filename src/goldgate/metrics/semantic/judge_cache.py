"""Judgments on disk, so a rerun after a crash, or an unchanged example, costs nothing.

One append-only JSONL file per endpoint and model under ``<cache_dir>/judge/``; a line per
judgment, keyed by a hash of everything the judge was sent (model, rubric, scale, the
texts, the sampling settings, the judge sample index) and the endpoint's URL. The request
holds no API key, and neither does the cache. Each line is one ``write`` on an ``O_APPEND``
descriptor, so concurrent writers and a kill mid-run leave whole lines (a cut line is skipped).

The file may have been planted or damaged, so reading trusts nothing: it must be a regular
file (a FIFO or a link to ``/dev/zero`` is an error naming it) of at most
:data:`~goldgate.io.inputs.MAX_INPUT_BYTES`; only the rows of the judgments wanted are parsed,
each no longer than its reply could make it; and a wanted row whose score is off the scale or
not finite, or whose token counts are not counts, is damage: set aside with a warning naming
the file and the key, and the judgment asked again. Writing never follows a symbolic link.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import re
import threading
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import IO, Any

from goldgate.errors import MetricError
from goldgate.io.inputs import MAX_INPUT_BYTES, open_regular
from goldgate.metrics.semantic.cache_files import open_cache_file
from goldgate.metrics.semantic.judge_http import MAX_TOKEN_COUNT, Judgment

_LOG = logging.getLogger(__name__)
#: how every row :meth:`JudgmentCache.put` writes begins: its key, read before parsing the row
_KEY_PREFIX = re.compile(rb'\{"key": "([0-9a-f]{64})"')
#: what a row holds besides its rationale (key, score, token counts, JSON punctuation)
_ROW_OVERHEAD = 1024
#: bytes one character of a reply may become in a row (``\u001f`` for a control character)
_ROW_BYTES_PER_REPLY_BYTE = 6


def request_key(base_url: str, body: dict[str, Any], sample: int) -> str:
    """The cache key of a judgment: a hash of the endpoint, the request and the sample."""
    document = {"url": base_url, "request": body, "sample": sample}
    text = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class JudgmentCache:
    """Judgments of one endpoint and model, read at start and appended as they arrive."""

    def __init__(
        self,
        directory: Path | None,
        base_url: str,
        model: str,
        *,
        scale: tuple[float, float],
        wanted: Collection[str],
        max_reply_bytes: int,
    ) -> None:
        """Read the judgments of the keys ``wanted`` (requests on ``scale``, whose replies held
        at most ``max_reply_bytes``) from ``directory``'s file for this endpoint and model."""
        self._entries: dict[str, Judgment] = {}
        self._lock = threading.Lock()
        self._scale = scale
        self._write_failed = False
        self.path: Path | None = None
        if directory is None:
            return
        stem = hashlib.sha256(f"{base_url}\n{model}".encode()).hexdigest()[:16]
        self.path = directory / f"{stem}.jsonl"
        self._read(set(wanted), _ROW_OVERHEAD + _ROW_BYTES_PER_REPLY_BYTE * max_reply_bytes)

    def get(self, key: str) -> Judgment | None:
        """The cached judgment for ``key``, if any."""
        return self._entries.get(key)

    def put(self, key: str, judgment: Judgment) -> None:
        """Record a judgment (on disk, in the kernel, when this returns)."""
        with self._lock:
            self._entries[key] = judgment
            if self.path is None:
                return
            line = json.dumps(
                {
                    "key": key,
                    "score": judgment.score,
                    "rationale": judgment.rationale,
                    "prompt_tokens": judgment.prompt_tokens,
                    "completion_tokens": judgment.completion_tokens,
                },
                ensure_ascii=False,
            )
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                fd = open_cache_file(self.path, os.O_WRONLY | os.O_APPEND, 0o600)
                try:
                    # A leading newline fences off a line a kill cut short; blank lines are skipped.
                    view = memoryview(("\n" + line + "\n").encode("utf-8"))
                    while view:
                        view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)
            except OSError as exc:
                if not self._write_failed:  # once: the cache saves money, scoring goes on
                    self._write_failed = True
                    _LOG.warning("cannot write the judge cache %s: %s", self.path, exc)

    def _read(self, wanted: set[str], max_row: int) -> None:
        assert self.path is not None
        if not wanted:
            return
        damaged: dict[str, str] = {}
        try:
            with open_regular(
                self.path, MetricError, what="the llm_judge cache", limit=MAX_INPUT_BYTES
            ) as handle:
                for key, row in _rows(handle, wanted, max_row):
                    if row is None:
                        damaged[key] = f"a row longer than {max_row:,} bytes"
                        continue
                    judgment = self._judgment(key, row)
                    if isinstance(judgment, Judgment):
                        self._entries[key] = judgment
                    else:
                        damaged[key] = judgment
        except FileNotFoundError:
            return
        except OSError as exc:  # read after opening: an I/O error, not goldgate's to mend
            raise MetricError(
                f"{self.path}: cannot read the llm_judge cache: {exc.strerror or exc}"
            ) from None
        for key, reason in damaged.items():
            if key not in self._entries:  # a later good row of the key supersedes it
                _LOG.warning(
                    "%s: the judge cache's row for key %s is damaged (%s); set aside, the"
                    " judgment is asked again",
                    self.path,
                    key,
                    reason,
                )

    def _judgment(self, key: str, raw: bytes) -> Judgment | str:
        """The judgment a row holds, or why it holds none."""
        try:
            item = json.loads(raw)
        except (ValueError, RecursionError):
            return "not JSON: a write cut short, or an edit"
        if not isinstance(item, dict) or set(item) != {
            "key",
            "score",
            "rationale",
            "prompt_tokens",
            "completion_tokens",
        }:
            return "not the fields of a judgment"
        if item["key"] != key:
            return "two keys"
        score, rationale = item["score"], item["rationale"]
        low, high = self._scale
        if isinstance(score, bool) or not isinstance(score, int | float):
            return f"score {_shown(score)} is not a number"
        if not (math.isfinite(score) and low <= score <= high):
            return f"score {_shown(score)} is off the judge's scale {low:g}-{high:g}"
        if not isinstance(rationale, str):
            return "its rationale is not text"
        counts = [item["prompt_tokens"], item["completion_tokens"]]
        for name, count in zip(("prompt_tokens", "completion_tokens"), counts, strict=True):
            if (
                isinstance(count, bool)
                or not isinstance(count, int)
                or not 0 <= count <= MAX_TOKEN_COUNT
            ):
                return f"{name} {_shown(count)} is not a token count (0 to {MAX_TOKEN_COUNT:,})"
        return Judgment(
            score=float(score),
            rationale=rationale,
            prompt_tokens=counts[0],
            completion_tokens=counts[1],
        )


def _shown(value: Any) -> str:
    """A value of a damaged row, short (a 400-digit number is named, not printed)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**20:
        return f"a {len(str(abs(value)))}-digit number"
    text = (
        json.dumps(value) if isinstance(value, str | int | float | None) else type(value).__name__
    )
    return text if len(text) <= 40 else text[:40] + "..."


def _rows(handle: IO[bytes], wanted: set[str], max_row: int) -> Iterator[tuple[str, bytes | None]]:
    """``(key, row)`` for each row of a wanted key, ``row`` None when longer than ``max_row``.

    Rows of other keys (other examples, rubrics, settings) are skipped by their prefix, never
    parsed; a line is read ``max_row`` bytes at a time, so a planted line of a gigabyte costs
    no more memory than a row may take.
    """
    while True:
        line = handle.readline(max_row + 1)
        if not line:
            return
        match = _KEY_PREFIX.match(line)
        key = match.group(1).decode("ascii") if match is not None else None
        if len(line) > max_row and not line.endswith(b"\n"):
            while line and not line.endswith(b"\n"):  # the rest of the long line
                line = handle.readline(max_row + 1)
            if key in wanted:
                yield key, None
            continue
        if key in wanted:
            yield key, line
