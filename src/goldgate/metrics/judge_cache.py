"""Judgments on disk, so a rerun after a crash, or an unchanged example, costs nothing.

One append-only JSONL file per endpoint and model under ``<cache_dir>/judge/``; a line per
judgment, keyed by a hash of everything the judge was sent (model, rubric, scale, the
texts, the sampling settings, the judge sample index) and the endpoint's URL. The request
holds no API key, and neither does the cache. Each line is one ``write`` on an ``O_APPEND``
descriptor, so concurrent writers and a kill mid-run leave whole lines (a cut line is skipped).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from pathlib import Path
from typing import Any

from goldgate.metrics.judge_http import Judgment

_LOG = logging.getLogger(__name__)


def request_key(base_url: str, body: dict[str, Any], sample: int) -> str:
    """The cache key of a judgment: a hash of the endpoint, the request and the sample."""
    document = {"url": base_url, "request": body, "sample": sample}
    text = json.dumps(document, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class JudgmentCache:
    """Judgments of one endpoint and model, read at start and appended as they arrive."""

    def __init__(self, directory: Path | None, base_url: str, model: str) -> None:
        self._entries: dict[str, Judgment] = {}
        self._lock = threading.Lock()
        self.path: Path | None = None
        if directory is None:
            return
        stem = hashlib.sha256(f"{base_url}\n{model}".encode()).hexdigest()[:16]
        self.path = directory / f"{stem}.jsonl"
        self._read()

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
                fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
                try:
                    # A leading newline fences off a line a kill cut short; blank lines are skipped.
                    view = memoryview(("\n" + line + "\n").encode("utf-8"))
                    while view:
                        view = view[os.write(fd, view) :]
                finally:
                    os.close(fd)
            except OSError as exc:
                _LOG.warning("cannot write the judge cache %s: %s", self.path, exc)

    def _read(self) -> None:
        assert self.path is not None
        try:
            data = self.path.read_bytes()
        except OSError:
            return
        for raw in data.split(b"\n"):
            try:
                item = json.loads(raw)
                judgment = Judgment(
                    score=float(item["score"]),
                    rationale=str(item["rationale"]),
                    prompt_tokens=int(item["prompt_tokens"]),
                    completion_tokens=int(item["completion_tokens"]),
                )
                key = item["key"]
            except (ValueError, KeyError, TypeError):
                continue
            if isinstance(key, str):
                self._entries[key] = judgment
