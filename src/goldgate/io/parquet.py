"""Parquet golden sets and predictions, read in record batches (the ``goldgate[parquet]`` extra).

Large evaluation sets usually live in Parquet. Rows come out one batch at a time as plain
Python values (strings, lists, dicts), so the readers of JSON Lines records apply unchanged
and a file is never held whole as Arrow tables. Errors name the file and the row (1-based),
or the column. pyarrow is imported here only, on first use.

What is read is bounded as a JSON Lines file is (:data:`~goldgate.io.inputs.MAX_INPUT_BYTES`),
but in what the rows decode to, not only in the file's size: a 10 KB file can hold one
1 MiB text and a million references to it (a dictionary page), 1 TB once decoded. So the
column chunks' uncompressed sizes are summed from the footer before anything is decoded,
text columns are decoded as dictionaries (their indices and one copy of each distinct text),
and each batch's decoded size is counted before its rows are made Python values.

A column of a type JSON has no value for (binary, decimal, dates and times) is refused,
naming the file and the column: goldgate reads text from string (UTF-8) columns only, as
from JSON Lines, and never guesses how bytes or a decimal become text.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import IO, Any

from goldgate.errors import GoldgateError
from goldgate.io.inputs import MAX_INPUT_BYTES, open_regular
from goldgate.terminal import console

PARQUET_SUFFIXES = (".parquet", ".pq")
#: Rows per batch: a few MB of short texts; the batch is released before the next is read.
BATCH_ROWS = 65_536
#: The most a batch may decode to where its size cannot be measured first (see _batch_rows).
BATCH_BYTES = 64 << 20


def is_parquet(path: Path) -> bool:
    """Whether ``path`` names a Parquet file (by its suffix)."""
    return path.suffix.lower() in PARQUET_SUFFIXES


def iter_rows(
    path: Path | str,
    error: type[GoldgateError],
    *,
    what: str,
    source: Any = None,
    columns: Collection[str] | None = None,
) -> Iterator[tuple[int, Any]]:
    """``(row number, row as a dict)`` of every row of a Parquet file, batch by batch.

    A null cell is left out of its row: a column a row does not use is null in Parquet, where
    JSON Lines would omit the key, so both read alike. ``columns``, when given, are the only
    ones read (those of them the file has); a reader that ignores other keys need not decode
    them.

    ``source``, when given, is an open binary file (an fsspec file on a Dask worker) read
    instead of ``path``, which then only names it in messages; ``path`` itself is opened only
    if it is a regular file of at most :data:`~goldgate.io.inputs.MAX_INPUT_BYTES`.
    """
    try:
        import pyarrow as pa
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
    with _opened(path, source, error, what) as handle:
        try:
            opened = pq.ParquetFile(handle)
            footer, schema = opened.metadata, opened.schema_arrow
            names = [name for name in schema.names if columns is None or name in columns]
            kinds = [schema.field(name).type for name in names]  # a repeated name: refused
        except OSError as exc:
            raise error(f"{path}: cannot read {what}: {exc}") from None
        except Exception as exc:  # pyarrow's ArrowInvalid and friends: not a Parquet file
            raise error(f"{path}: not a readable Parquet file: {exc}") from None
        for name, kind in zip(names, kinds, strict=True):
            _check_type(kind, name, path, error, what)
        _check_footer(footer, names, path, error, what)
        # Text columns (and lists of texts) decoded as dictionaries: bounded in memory
        # whatever their pages repeat, and measured before they are expanded. pyarrow cannot
        # do that for a text inside a struct or a map: there, batches are made small enough
        # that even a dictionary's largest text (at most its column chunk) on every row of a
        # batch stays bounded.
        leaves = [footer.schema.column(i) for i in range(footer.num_columns)]
        texts = [
            leaf.path
            for leaf in leaves
            if leaf.physical_type == "BYTE_ARRAY"
            and leaf.path.split(".")[0] in names
            and _lists_of_text(kinds[names.index(leaf.path.split(".")[0])])
        ]
        batch_rows = _batch_rows(footer, set(names) - {t.split(".")[0] for t in texts}, leaves)
        try:
            reader = pq.ParquetFile(handle, metadata=footer, read_dictionary=texts)
        except Exception as exc:
            raise error(f"{path}: not a readable Parquet file: {exc}") from None
        plain = [_plain_type(kind) for kind in kinds]
        number = 0
        decoded = 0
        try:
            # Row group by row group: a batch across two would join their dictionaries,
            # which pyarrow cannot do for a list of texts.
            batches = (
                batch
                for group in range(footer.num_row_groups)
                for batch in reader.iter_batches(
                    batch_size=batch_rows, row_groups=[group], columns=names
                )
            )
            for batch in batches:
                decoded += batch.num_rows + sum(_decoded_bytes(c) for c in batch.columns)
                if decoded > MAX_INPUT_BYTES:
                    raise error(
                        f"{path}: the Parquet {what} decodes to more than {MAX_INPUT_BYTES:,}"
                        f" bytes by row {number + batch.num_rows:,}, the most goldgate reads"
                    )
                rows = pa.RecordBatch.from_arrays(
                    [
                        column.cast(kind) if column.type != kind else column
                        for column, kind in zip(batch.columns, plain, strict=True)
                    ],
                    names=names,
                ).to_pylist()
                del batch
                for row in rows:
                    number += 1
                    yield number, {key: value for key, value in row.items() if value is not None}
        except GoldgateError:
            raise
        except Exception as exc:  # damage found while decoding a later row group
            raise error(f"{path}: damaged Parquet file after row {number}: {exc}") from None


@contextmanager
def _opened(
    path: Path | str, source: Any, error: type[GoldgateError], what: str
) -> Iterator[IO[bytes]]:
    """``source``, or ``path`` opened if it is a regular file within the input cap."""
    if source is not None:
        yield source
        return
    with ExitStack() as stack:
        try:
            handle = stack.enter_context(open_regular(Path(path), error, what=what))
        except FileNotFoundError:
            raise error(f"{path}: {what} not found") from None
        yield handle


def _lists_of_text(kind: Any) -> bool:
    """Whether ``kind`` is text, or lists of lists ... of text: what pyarrow can decode as
    dictionaries (``read_dictionary``)."""
    import pyarrow as pa

    types = pa.types
    while types.is_list(kind) or types.is_large_list(kind):
        kind = kind.value_type
    if types.is_dictionary(kind):
        kind = kind.value_type
    return bool(types.is_string(kind) or types.is_large_string(kind))


def _batch_rows(footer: Any, undecoded: set[str], leaves: list[Any]) -> int:
    """Rows per batch: :data:`BATCH_ROWS`, fewer when a column of ``undecoded`` (texts not
    read as dictionaries) has a dictionary page, whose one text, at most its chunk's
    uncompressed size, may be repeated on every row of a batch."""
    largest = 0
    for group in range(footer.num_row_groups):
        row_group = footer.row_group(group)
        for index, leaf in enumerate(leaves):
            chunk = row_group.column(index)
            if (
                leaf.physical_type == "BYTE_ARRAY"
                and leaf.path.split(".")[0] in undecoded
                and chunk.has_dictionary_page
            ):
                largest = max(largest, chunk.total_uncompressed_size)
    if largest <= 0:
        return BATCH_ROWS
    return max(1, min(BATCH_ROWS, BATCH_BYTES // largest))


def _check_footer(
    footer: Any, names: list[str], path: Path | str, error: type[GoldgateError], what: str
) -> None:
    """Refuse, before decoding, a file whose pages inflate past the input cap."""
    wanted = set(names)
    size = 0
    for group in range(footer.num_row_groups):
        row_group = footer.row_group(group)
        for index in range(row_group.num_columns):
            chunk = row_group.column(index)
            if chunk.path_in_schema.split(".")[0] in wanted:
                size += max(chunk.total_uncompressed_size, 0)
    if size > MAX_INPUT_BYTES:
        raise error(
            f"{path}: the Parquet {what} holds {size:,} bytes once uncompressed, more than"
            f" {MAX_INPUT_BYTES:,}, the most goldgate reads"
        )


def _check_type(
    kind: Any, column: str, path: Path | str, error: type[GoldgateError], what: str
) -> None:
    """A column's type must hold only values JSON has: text, numbers, booleans, null, and
    lists, structs and maps of them. Anything else (binary, decimal, dates) is refused."""
    import pyarrow as pa

    types = pa.types
    if types.is_dictionary(kind):
        _check_type(kind.value_type, column, path, error, what)
    elif types.is_struct(kind):
        for index in range(kind.num_fields):
            field = kind.field(index)
            _check_type(field.type, f"{column}.{field.name}", path, error, what)
    elif types.is_map(kind):
        _check_type(kind.key_type, f"{column} (its keys)", path, error, what)
        _check_type(kind.item_type, column, path, error, what)
    elif types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        _check_type(kind.value_type, column, path, error, what)
    elif not (
        types.is_null(kind)
        or types.is_boolean(kind)
        or types.is_integer(kind)
        or types.is_float32(kind)
        or types.is_float64(kind)
        or types.is_string(kind)
        or types.is_large_string(kind)
    ):
        raise error(
            f"{path}: column {column!r} holds {kind} values, which a {what} cannot hold:"
            " goldgate reads text from string (UTF-8) columns, and numbers, booleans,"
            " lists and structs of them; store it as one of those"
        )


def _plain_type(kind: Any) -> Any:
    """``kind`` with every dictionary replaced by its values' type: what a batch is cast to
    once its decoded size is known."""
    import pyarrow as pa

    types = pa.types
    if types.is_dictionary(kind):
        return _plain_type(kind.value_type)
    if types.is_struct(kind):
        return pa.struct(
            [
                field.with_type(_plain_type(field.type))
                for field in (kind.field(i) for i in range(kind.num_fields))
            ]
        )
    if types.is_large_list(kind):
        return pa.large_list(kind.value_field.with_type(_plain_type(kind.value_type)))
    if types.is_fixed_size_list(kind):
        return pa.list_(kind.value_field.with_type(_plain_type(kind.value_type)), kind.list_size)
    if types.is_list(kind):
        return pa.list_(kind.value_field.with_type(_plain_type(kind.value_type)))
    if types.is_map(kind):
        return pa.map_(
            kind.key_field.with_type(_plain_type(kind.key_type)),
            kind.item_field.with_type(_plain_type(kind.item_type)),
        )
    return kind


def _decoded_bytes(array: Any) -> int:
    """The bytes ``array`` takes once every dictionary in it is expanded (its texts repeated
    as often as they are referenced), computed without expanding anything."""
    import pyarrow as pa
    import pyarrow.compute as pc

    types = pa.types
    kind = array.type
    if types.is_dictionary(kind):
        dictionary = array.dictionary
        if types.is_string(dictionary.type) or types.is_large_string(dictionary.type):
            lengths = pc.binary_length(dictionary)
        else:  # a fixed-width value: each reference costs the same
            lengths = pa.array([dictionary.nbytes // max(len(dictionary), 1)] * len(dictionary))
        used = pc.sum(pc.take(lengths, array.indices)).as_py() or 0
        return int(used) + int(array.indices.nbytes)
    if types.is_struct(kind):
        return int(array.nbytes if kind.num_fields == 0 else 0) + sum(
            _decoded_bytes(child) for child in array.flatten()
        )
    if types.is_list(kind) or types.is_large_list(kind) or types.is_fixed_size_list(kind):
        return 8 * len(array) + _decoded_bytes(array.flatten())
    if types.is_map(kind):
        return 8 * len(array) + _decoded_bytes(array.keys) + _decoded_bytes(array.items)
    return int(array.nbytes)
