"""Reference embeddings on disk, keyed by the model's weight hash and the text.

A golden set is frozen, so its references are embedded once per model and read back on every
later run; a gate run then embeds only the candidates. One pair of files per model under
``<cache_dir>/embeddings/``:

- ``<hash>.f32``: rows of float32 vectors, written at row boundaries;
- ``<hash>.idx``: a header line, then one line ``<text sha256> <row>`` per vector.

Vectors are written before their index lines, under an exclusive lock, and each index line
names its row explicitly: a process killed between the two leaves orphan rows that nothing
points at, and a line cut short is skipped on read. Several processes may share the cache.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float32]
_FORMAT = 1
_LOG = logging.getLogger(__name__)


def text_key(text: str) -> str:
    """The cache key of a text: its SHA-256, hex."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class VectorCache:
    """Embeddings of texts under one model, read once and appended as new texts arrive."""

    def __init__(self, directory: Path, model_hash: str) -> None:
        self.directory = directory
        self.model_hash = model_hash
        stem = model_hash[:32]
        self.index_path = directory / f"{stem}.idx"
        self.vector_path = directory / f"{stem}.f32"
        #: the vectors' dimension, from the index header (None until known)
        self.dim: int | None = None

    def _header(self, dim: int) -> str:
        return json.dumps({"goldgate_vectors": _FORMAT, "model": self.model_hash, "dim": dim})

    def lookup(self, texts: Sequence[str]) -> dict[str, FloatArray]:
        """Cached vectors of those ``texts`` that are in the cache (text → vector)."""
        rows = self._read_index()
        if not rows or self.dim is None:
            return {}
        wanted = {text_key(text): text for text in texts}
        hits = {wanted[key]: row for key, row in rows.items() if key in wanted}
        if not hits:
            return {}
        try:
            matrix = np.fromfile(self.vector_path, dtype=np.float32)
        except OSError:
            return {}
        count = matrix.size // self.dim
        matrix = matrix[: count * self.dim].reshape(count, self.dim)
        return {text: matrix[row] for text, row in hits.items() if row < count}

    def store(self, texts: Sequence[str], vectors: FloatArray) -> None:
        """Append vectors of ``texts`` (row i is text i); a failure to write is only logged."""
        if not texts:
            return
        block = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.dim is None:
            self._read_index()
        if self.dim is not None and self.dim != block.shape[1]:
            _LOG.warning("%s: vectors of another dimension; not cached", self.index_path)
            return
        self.dim = block.shape[1]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._locked():
                row_bytes = 4 * block.shape[1]
                fd = os.open(self.vector_path, os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    size = os.fstat(fd).st_size
                    start = -(-size // row_bytes)  # after any row a crash left half-written
                    os.pwrite(fd, block.tobytes(), start * row_bytes)
                finally:
                    os.close(fd)
                lines = "".join(
                    f"{text_key(text)} {start + offset}\n" for offset, text in enumerate(texts)
                )
                self._append_index(lines)
        except OSError as exc:
            # The cache saves time only: scoring goes on, the next run embeds them again.
            _LOG.warning("cannot write the embedding cache %s: %s", self.directory, exc)

    def _append_index(self, lines: str) -> None:
        fd = os.open(self.index_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            size = os.fstat(fd).st_size
            prefix = "" if size else self._header(self.dim or 0) + "\n"
            if size and _last_byte(self.index_path, size) != b"\n":
                prefix = "\n"
            data = (prefix + lines).encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def _read_index(self) -> dict[str, int]:
        try:
            text = self.index_path.read_text(encoding="ascii", errors="replace")
        except OSError:
            return {}
        lines = text.split("\n")
        try:
            header = json.loads(lines[0])
            dim = header["dim"]
            if lines[0] != self._header(dim) or not isinstance(dim, int) or dim <= 0:
                raise ValueError(lines[0])
        except (ValueError, KeyError, TypeError):
            if lines[0]:
                _LOG.warning("%s: not this model's embedding cache; ignored", self.index_path)
            return {}
        self.dim = dim
        rows: dict[str, int] = {}
        for line in lines[1:]:
            key, _, row = line.partition(" ")
            if len(key) == 64 and row.isdigit():
                rows[key] = int(row)
        return rows

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock_path = self.directory / ".lock"
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)


def _last_byte(path: Path, size: int) -> bytes:
    with path.open("rb") as handle:
        handle.seek(size - 1)
        return handle.read(1)
