"""The examples side file of a result: ``examples.jsonl.gz`` beside ``result.json``.

Gzip-compressed JSON Lines, one example row per line (fields at their default left out) with
the name of its suite under ``suite``. Written byte-stable (no timestamp in the gzip header)
and compressed as the rows are dumped; read back no further than the result's examples may
take, so a damaged or hostile file is refused before it costs much.
"""

from __future__ import annotations

import gzip
import json
import zlib
from collections import deque
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import Self

from goldgate.model.example_table import ExampleResult, example_table

#: the side file of per-example rows written beside result.json
EXAMPLES_FILE = "examples.jsonl.gz"
#: The most one row of the examples file may inflate to (a row holds an example's input,
#: references, output and blessed output): generous, and what a gzip bomb of one long line
#: costs before it is refused.
MAX_EXAMPLE_ROW_BYTES = 16 << 20
#: The most the whole examples file may inflate to, whatever the result's example count says.
MAX_EXAMPLES_BYTES = 4 << 30
#: example rows dumped before they are handed to the compressor
_ROWS_PER_BATCH = 1024
#: batches of rows waiting for a compressor in its own thread (~0.5 MB each at most)
_QUEUED_BATCHES = 8


class _GzipStream:
    """Bytes compressed in order into one gzip member (level 6, no timestamp).

    With ``background``, each batch is compressed in a thread of its own while the caller
    makes the next (zlib lets go of the GIL as it compresses: at a million examples that
    is ~8 s of the ~18 s a run spends writing its examples); at most ``_QUEUED_BATCHES``
    wait, so the text is never all held.
    """

    def __init__(self, *, background: bool) -> None:
        self._compressor = zlib.compressobj(6, zlib.DEFLATED, 31)
        self._parts: list[bytes] = []
        self._pending: deque[Future[bytes]] = deque()
        self._pool = ThreadPoolExecutor(1, thread_name_prefix="gzip") if background else None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def add(self, data: bytes) -> None:
        if self._pool is None:
            self._parts.append(self._compressor.compress(data))
            return
        if len(self._pending) >= _QUEUED_BATCHES:
            self._parts.append(self._pending.popleft().result())
        self._pending.append(self._pool.submit(self._compressor.compress, data))

    def finish(self) -> bytes:
        """Every part compressed, and the end of the member."""
        while self._pending:
            self._parts.append(self._pending.popleft().result())
        self._parts.append(self._compressor.flush())
        return b"".join(self._parts)


def examples_file_bytes(
    suites: Iterable[tuple[str, Sequence[ExampleResult]]], *, threads: int = 1
) -> bytes:
    """The side file's bytes: the rows of each suite (its name and examples), in order.

    With ``threads`` above 1 the rows are compressed in a thread of their own while the next
    ones are dumped: the same bytes.
    """
    # Compressed row by row as the rows are dumped: the whole text of a million rows
    # (and its list of lines) is never held. The bytes are gzip.compress(text,
    # compresslevel=6, mtime=0)'s: zlib's output does not depend on how input is fed.
    batch: list[bytes] = []
    with _GzipStream(background=threads > 1) as compressed:
        for name, examples in suites:
            prefix = ('{"suite":' + json.dumps(name, ensure_ascii=False) + ",").encode()
            # rows streamed from the suite's table: no model per row where it holds columns
            for row in example_table(examples).json_rows():
                batch.append(prefix + row[1:] if row != b"{}" else prefix[:-1] + b"}")
                if len(batch) == _ROWS_PER_BATCH:
                    compressed.add(b"\n".join(batch) + b"\n")
                    batch.clear()
        if batch:
            compressed.add(b"\n".join(batch) + b"\n")
        data = compressed.finish()
    return data


def read_examples_file(side: Path, expected: Mapping[str, int]) -> dict[str, list[ExampleResult]]:
    """Each suite's rows, read back from the side file ``side``; ``expected`` is each suite's
    number of examples, as the result says.

    The file is read no further than the result's examples may take (a row of at most
    ``MAX_EXAMPLE_ROW_BYTES``, no more rows than the suite's examples), and each suite
    must get as many rows as the result says it has examples.
    """
    from pydantic import ValidationError

    from goldgate.errors import InputError
    from goldgate.io.inputs import open_regular

    by_suite: dict[str, list[ExampleResult]] = {name: [] for name in expected}
    total = sum(expected.values())
    budget = min(total * MAX_EXAMPLE_ROW_BYTES, MAX_EXAMPLES_BYTES)
    used = 0
    try:
        with (
            open_regular(side, InputError, what="the examples file of the result") as raw,
            gzip.GzipFile(fileobj=raw, mode="rb") as stream,
        ):
            number = 0
            while line := stream.readline(MAX_EXAMPLE_ROW_BYTES + 1):
                number += 1
                used += len(line)
                if len(line) > MAX_EXAMPLE_ROW_BYTES or used > budget:
                    most = (
                        f"a row may take ({MAX_EXAMPLE_ROW_BYTES:,} bytes)"
                        if len(line) > MAX_EXAMPLE_ROW_BYTES
                        else f"the result's {total:,} examples may take ({budget:,} bytes)"
                    )
                    raise InputError(f"{side}:{number}: the examples inflate past what {most}")
                try:
                    row = json.loads(line.decode("utf-8"))
                    name = row.pop("suite")
                    rows = by_suite[name]
                    if len(rows) >= expected[name]:
                        raise InputError(
                            f"{side}:{number}: more example rows for suite {name!r} than"
                            f" the {expected[name]:,} examples the result says it has"
                        )
                    rows.append(ExampleResult.model_validate(row))
                except (ValueError, KeyError, TypeError, AttributeError) as exc:
                    what = (
                        f"{exc.errors()[0]['msg']}"
                        if isinstance(exc, ValidationError)
                        else f"unknown suite {exc}"
                        if isinstance(exc, KeyError)
                        else "not a JSON object with a 'suite'"
                    )
                    raise InputError(f"{side}:{number}: not an example row: {what}") from None
    except FileNotFoundError as exc:
        reason = exc.strerror or str(exc)
        raise InputError(f"{side}: cannot read the examples of the result: {reason}") from None
    except OSError as exc:  # gzip.BadGzipFile among them
        raise InputError(f"{side}: damaged examples file: {exc.strerror or exc}") from None
    except (EOFError, zlib.error) as exc:
        raise InputError(f"{side}: damaged examples file: {exc}") from None
    for name, rows in by_suite.items():
        if len(rows) != expected[name]:
            raise InputError(
                f"{side}: {len(rows):,} example rows for suite {name!r}, where the result"
                f" says it has {expected[name]:,} examples; re-run to write both again"
            )
    return by_suite
