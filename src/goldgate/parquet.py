"""Parquet golden sets and predictions, read in record batches (the ``goldgate[parquet]`` extra).

Large evaluation sets usually live in Parquet. Rows come out one batch at a time as plain
Python values (strings, lists, dicts), so the readers of JSONL records apply unchanged and
a file is never held whole as Arrow tables. Errors name the file and the row (1-based).
pyarrow is imported here only, on first use.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from goldgate import console
from goldgate.errors import GoldgateError

PARQUET_SUFFIXES = (".parquet", ".pq")
#: Rows per batch: a few MB of short texts; the batch is released before the next is read.
BATCH_ROWS = 65_536


def is_parquet(path: Path) -> bool:
    """Whether ``path`` names a Parquet file (by its suffix)."""
    return path.suffix.lower() in PARQUET_SUFFIXES


def iter_rows(
    path: Path | str, error: type[GoldgateError], *, what: str, source: Any = None
) -> Iterator[tuple[int, Any]]:
    """``(row number, row as a dict)`` of every row of a Parquet file, batch by batch.

    A null cell is left out of its row: a column a row does not use is null in Parquet, where
    JSON Lines would omit the key, so both read alike.

    ``source``, when given, is an open binary file (an fsspec file on a Dask worker) read
    instead of ``path``, which then only names it in messages.
    """
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        if isinstance(exc, ModuleNotFoundError) and exc.name == "pyarrow":
            raise error(
                f"{path}: reading a Parquet {what} needs pyarrow: pip install 'goldgate[parquet]'"
            ) from None
        # Installed but broken (a NumPy it was not built for, a missing shared library):
        # pyarrow's own message says what to fix, where "install it" would mislead.
        raise error(
            f"{path}: reading a Parquet {what} needs pyarrow, which is installed but does not"
            f" import: {console.inline(f'{type(exc).__name__}: {exc}')}"
        ) from None
    try:
        handle = pq.ParquetFile(path if source is None else source)
    except FileNotFoundError:
        raise error(f"{path}: {what} not found") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {what}: {exc}") from None
    except Exception as exc:  # pyarrow's ArrowInvalid and friends: not a Parquet file
        raise error(f"{path}: not a readable Parquet file: {exc}") from None
    number = 0
    try:
        for batch in handle.iter_batches(batch_size=BATCH_ROWS):
            for row in batch.to_pylist():
                number += 1
                yield number, {key: value for key, value in row.items() if value is not None}
    except GoldgateError:
        raise
    except Exception as exc:  # damage found while decoding a later row group
        raise error(f"{path}: damaged Parquet file after row {number}: {exc}") from None
