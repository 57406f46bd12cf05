"""Compact, checked encoding of per-example data for large baselines.

A block is bytes compressed with zlib and written as base64, so it lives in a JSON file
(one file: atomic writes and ``git show REF:path`` keep working), with the SHA-256 of the
uncompressed bytes beside it: a damaged or hand-edited block is refused, never decoded into
wrong numbers.

Statistics are stored column by column, each column in the smallest little-endian type that
holds it exactly: counts (n-gram matches, lengths, exact-match hits) become 1-, 2- or 4-byte
integers, and only true fractions (ROUGE's per-example F) stay float64, whose bytes are
regrouped by significance before compression ("byte shuffle"), which packs them tighter.
Decoding gives back the float64 values bit for bit.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import zlib
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]

#: The column types a packed statistics block may use.
ColumnType = Literal["u1", "u2", "u4", "i8", "f8"]
#: Each column type's NumPy type (little-endian, as packed; also the in-memory type of
#: :class:`goldgate.model.compact_stats.CompactStats` columns).
COLUMN_DTYPES: dict[str, str] = {"u1": "<u1", "u2": "<u2", "u4": "<u4", "i8": "<i8", "f8": "<f8"}
_LEVEL = 6


class PackError(ValueError):
    """A block that does not decode to what its description says (damage or tampering)."""


def pack_bytes(raw: bytes) -> tuple[str, str]:
    """``(sha256 hex of raw, base64 of zlib(raw))``."""
    return hashlib.sha256(raw).hexdigest(), base64.b64encode(zlib.compress(raw, _LEVEL)).decode()


def unpack_bytes(
    data: str, sha256: str, what: str, *, size: int | None = None, limit: int | None = None
) -> bytes:
    """The raw bytes of a block; ``PackError`` naming ``what`` when it is damaged.

    ``size``, when the block's raw length is known beforehand, bounds the inflating: a few
    megabytes of zlib can inflate to gigabytes (a thousand to one), and a tampered block
    must be refused before it is held, not after. ``limit``, for a block whose length is not
    known (JSON of ids or outputs), bounds it the same way at the most it may be.
    """
    bound = size if size is not None else limit
    beyond = False
    try:
        compressed = base64.b64decode(data.encode("ascii"), validate=True)
        if bound is None:
            raw = zlib.decompress(compressed)
        else:
            inflater = zlib.decompressobj()
            raw = inflater.decompress(compressed, bound + 1)
            # past the bound, not flushed: flushing would inflate the rest at once
            beyond = len(raw) > bound or bool(inflater.unconsumed_tail)
            if not beyond:
                raw += inflater.flush()
                if not inflater.eof:
                    raise zlib.error("incomplete or truncated stream")
    except (binascii.Error, ValueError, zlib.error) as exc:
        raise PackError(f"{what}: the packed data does not decode ({exc})") from None
    if beyond:
        need = "its contents need" if size is not None else "it may hold"
        raise PackError(f"{what}: the packed data inflates past the {bound} bytes {need}")
    if hashlib.sha256(raw).hexdigest() != sha256:
        raise PackError(f"{what}: the packed data does not match its sha256")
    return raw


def json_bytes(value: Any) -> bytes:
    """A JSON value (ids, outputs) as the bytes a block packs."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return text.encode("utf-8")


def pack_json(value: Any) -> tuple[str, str]:
    """A JSON value (ids, outputs) as a block."""
    return pack_bytes(json_bytes(value))


def unpack_json(data: str, sha256: str, what: str, *, limit: int | None = None) -> Any:
    """The JSON value of a block (inflated to at most ``limit`` bytes, when given)."""
    raw = unpack_bytes(data, sha256, what, limit=limit)
    try:
        return json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise PackError(f"{what}: the packed data is not JSON ({exc})") from None


def column_type(column: FloatArray) -> ColumnType:
    """The smallest type that holds every value of ``column`` exactly."""
    if column.size == 0:
        return "u1"
    if not np.all(np.isfinite(column)) or not np.array_equal(column, np.trunc(column)):
        return "f8"
    # -0.0 is integral yet would come back as 0.0: keep its sign bit.
    if np.any(np.signbit(column) & (column == 0)):
        return "f8"
    low, high = float(column.min()), float(column.max())
    if low >= 0:
        for kind, bound in (("u1", 2**8), ("u2", 2**16), ("u4", 2**32)):
            if high < bound:
                return kind  # type: ignore[return-value]
    if low >= -(2**53) and high <= 2**53:
        return "i8"
    return "f8"


def pack_columns(array: FloatArray) -> tuple[list[ColumnType], str, str]:
    """An ``(n, m)`` float64 array as column types and a block of its columns."""
    return pack_column_list([array[:, index] for index in range(array.shape[1])])


def pack_column_list(
    columns: Sequence[npt.NDArray[np.generic]],
) -> tuple[list[ColumnType], str, str]:
    """``pack_columns`` of the array whose columns these are, taken one column at a time: a
    column may be in any type whose values float64 holds exactly (compact statistics are
    packed without widening all of them to float64 at once)."""
    kinds: list[ColumnType] = []
    parts: list[bytes] = []
    for column in columns:
        values = np.ascontiguousarray(column, dtype=np.float64)
        kind = column_type(values)
        kinds.append(kind)
        encoded = values.astype(COLUMN_DTYPES[kind]).tobytes()
        if kind == "f8":
            # byte shuffle: all first bytes, then all second bytes...
            encoded = np.frombuffer(encoded, dtype=np.uint8).reshape(-1, 8).T.tobytes()
        parts.append(encoded)
    sha256, data = pack_bytes(b"".join(parts))
    return kinds, sha256, data


def unpack_typed_columns(
    kinds: Sequence[str], n: int, data: str, sha256: str, what: str
) -> list[npt.NDArray[np.generic]]:
    """The columns of a block written by ``pack_columns``, each in its packed type."""
    widths = []
    for kind in kinds:
        if kind not in COLUMN_DTYPES:
            raise PackError(f"{what}: unknown column type {kind!r}")
        widths.append(np.dtype(COLUMN_DTYPES[kind]).itemsize * n)
    need = sum(widths)
    raw = unpack_bytes(data, sha256, what, size=need)
    if need != len(raw):
        raise PackError(
            f"{what}: the packed data holds {len(raw)} bytes, its {len(kinds)} columns of"
            f" {n} examples need {need}"
        )
    columns = []
    offset = 0
    for kind, width in zip(kinds, widths, strict=True):
        chunk = raw[offset : offset + width]
        offset += width
        if kind == "f8":
            chunk = np.frombuffer(chunk, dtype=np.uint8).reshape(8, -1).T.tobytes()
        column = np.frombuffer(chunk, dtype=COLUMN_DTYPES[kind])
        if kind == "f8" and not np.all(np.isfinite(column)):  # integer types always are
            raise PackError(f"{what}: the packed statistics hold NaN or infinity")
        columns.append(column)
    return columns


def unpack_columns(kinds: Sequence[str], n: int, data: str, sha256: str, what: str) -> FloatArray:
    """The ``(n, len(kinds))`` float64 array of a block written by ``pack_columns``."""
    columns = unpack_typed_columns(kinds, n, data, sha256, what)
    out = np.empty((n, len(kinds)), dtype=np.float64)
    for index, column in enumerate(columns):
        out[:, index] = column
    return out
