"""Reference embeddings on disk, keyed by the model's weight hash and the text.

A golden set is frozen, so its references are embedded once per model and read back on every
later run; a gate run then embeds only the candidates. One pair of files per model under
``<cache_dir>/embeddings/``:

- ``<hash>.f32``: rows of float32 vectors, written at row boundaries;
- ``<hash>.idx``: a header line, then one line ``<text sha256> <row>`` per vector.

Vectors are written before their index lines, under an exclusive lock, and each index line
names its row explicitly: a process killed between the two leaves orphan rows that nothing
points at, and a line cut short is skipped on read. Several processes may share the cache.

Nothing read is trusted: both files must be regular (a FIFO or a link to ``/dev/zero`` is an
error naming it); only the index lines of the texts asked for are kept and only their rows
are read, so memory follows what is looked up, not what the files hold; a row holding NaN or
an infinity is damage, set aside with a warning and embedded again. Writing never follows a
symbolic link.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import logging
import os
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

from goldgate.errors import MetricError
from goldgate.io.inputs import open_regular
from goldgate.metrics.semantic.cache_files import open_cache_file

FloatArray = npt.NDArray[np.float32]
_FORMAT = 1
_LOG = logging.getLogger(__name__)
#: the widest vectors a cache header may declare (embedding models stop near 8,192)
_MAX_DIM = 1 << 16
#: the longest index line read whole: a header, or a 64-character key and a row number
_MAX_LINE = 4096
#: the vectors file is read only at the rows looked up, so its size is not what bounds memory
_ANY_SIZE = 1 << 62


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
        wanted = {text_key(text): text for text in texts}
        rows = self._read_index(wanted.keys())
        if not rows or self.dim is None:
            return {}
        vectors = self._read_rows(sorted(set(rows.values())), self.dim)
        found: dict[str, FloatArray] = {}
        damaged: list[str] = []
        for key, row in rows.items():
            vector = vectors.get(row)
            if vector is None:
                continue  # past the end of the vectors: a write a kill cut short
            if not np.isfinite(vector).all():
                damaged.append(key)  # a NaN would score as a zero vector: 0, silently
                continue
            found[wanted[key]] = vector
        if damaged:
            _LOG.warning(
                "%s: %d cached vector%s with NaN or infinite values (text key %s%s); set"
                " aside, embedded again",
                self.vector_path,
                len(damaged),
                "" if len(damaged) == 1 else "s",
                damaged[0],
                "" if len(damaged) == 1 else ", ...",
            )
        return found

    def _read_rows(self, rows: list[int], dim: int) -> dict[int, FloatArray]:
        """The vectors at ``rows`` (ascending) that the file holds whole, one read a run."""
        row_bytes = 4 * dim
        found: dict[int, FloatArray] = {}
        try:
            with open_regular(
                self.vector_path, MetricError, what="the embedding cache's vectors", limit=_ANY_SIZE
            ) as handle:
                fd = handle.fileno()
                count = os.fstat(fd).st_size // row_bytes
                rows = [row for row in rows if row < count]
                start = 0
                while start < len(rows):
                    end = start + 1  # rows[start:end] are consecutive
                    while end < len(rows) and rows[end] == rows[end - 1] + 1:
                        end += 1
                    first = rows[start]
                    data = os.pread(fd, (end - start) * row_bytes, first * row_bytes)
                    block = np.frombuffer(data, dtype=np.float32)
                    whole = block.size // dim  # fewer if the file shrank meanwhile
                    block = block[: whole * dim].reshape(whole, dim)
                    for offset in range(whole):
                        found[first + offset] = block[offset]
                    start = end
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise MetricError(
                f"{self.vector_path}: cannot read the embedding cache's vectors:"
                f" {exc.strerror or exc}"
            ) from None
        return found

    def store(self, texts: Sequence[str], vectors: FloatArray) -> None:
        """Append vectors of ``texts`` (row i is text i); a failure to write is only logged."""
        if not texts:
            return
        block = np.ascontiguousarray(vectors, dtype=np.float32)
        if self.dim is None:
            self._read_index(())
        if self.dim is not None and self.dim != block.shape[1]:
            _LOG.warning("%s: vectors of another dimension; not cached", self.index_path)
            return
        self.dim = block.shape[1]
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            with self._locked():
                row_bytes = 4 * block.shape[1]
                fd = open_cache_file(self.vector_path, os.O_RDWR, 0o644)
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
        fd = open_cache_file(self.index_path, os.O_RDWR | os.O_APPEND, 0o644)
        try:
            size = os.fstat(fd).st_size
            prefix = "" if size else self._header(self.dim or 0) + "\n"
            if size and os.pread(fd, 1, size - 1) != b"\n":
                prefix = "\n"
            data = (prefix + lines).encode("ascii")
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)

    def _read_index(self, wanted: Collection[str]) -> dict[str, int]:
        """The rows of the ``wanted`` keys (none: only the header is read, for ``dim``)."""
        try:
            with open_regular(
                self.index_path, MetricError, what="the embedding cache's index"
            ) as handle:
                first = handle.readline(_MAX_LINE).decode("ascii", "replace").rstrip("\n")
                try:
                    header = json.loads(first)
                    dim = header["dim"]
                    if (
                        first != self._header(dim)
                        or not isinstance(dim, int)
                        or not 0 < dim <= _MAX_DIM
                    ):
                        raise ValueError(first)
                except (ValueError, KeyError, TypeError, RecursionError):
                    if first:
                        _LOG.warning(
                            "%s: not this model's embedding cache; ignored", self.index_path
                        )
                    return {}
                self.dim = dim
                rows: dict[str, int] = {}
                if not wanted:
                    return rows
                keys = {key.encode("ascii") for key in wanted}
                while line := handle.readline(_MAX_LINE):
                    # A longer line comes in pieces; none can pass for a line of a wanted key
                    # unless it is one, byte for byte, and a row past the file is not read.
                    key, _, row = line.rstrip(b"\n").partition(b" ")
                    if key in keys and row.isdigit():
                        rows[key.decode("ascii")] = int(row)
                return rows
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise MetricError(
                f"{self.index_path}: cannot read the embedding cache's index: {exc.strerror or exc}"
            ) from None

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        lock_path = self.directory / ".lock"
        fd = open_cache_file(lock_path, os.O_RDWR, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)
