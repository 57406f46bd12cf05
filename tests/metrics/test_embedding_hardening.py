"""``embedding_similarity``'s cache and model folder against what may be planted in them:
non-regular files are errors naming them, NaN rows are damage, reads follow what is looked
up, and no write goes through a symbolic link."""

from __future__ import annotations

import os
import tracemalloc
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldgate.errors import GoldgateError
from goldgate.metrics.batch import MetricContext
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric
from goldgate.metrics.semantic.vector_cache import text_key
from tests.metrics.test_embedding import ROWS, build_model

pytest.importorskip("model2vec")

CANDIDATES = [row["candidate"] for row in ROWS]
REFERENCES = [row["references"] for row in ROWS]


def run(tmp_path: Path, model: Path) -> tuple[list[float], list[str]]:
    """Score ROWS with the cache in ``tmp_path/.goldgate``; the scores and the texts embedded."""
    context = MetricContext(root=tmp_path, cache_dir=tmp_path / ".goldgate")
    metric = create_metric("embedding_similarity", {"model": str(model)})
    metric.bind(context)
    encoder = metric.encoder  # type: ignore[attr-defined]
    seen: list[str] = []
    original = encoder.encode

    def counting(texts: list[str]) -> Any:
        seen.extend(texts)
        return original(texts)

    encoder.encode = counting
    (result,) = score_corpus([("e", metric)], CANDIDATES, REFERENCES, context=context)
    return result.per_example(), seen


def cache_files(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / ".goldgate" / "embeddings"
    (index,) = folder.glob("*.idx")
    return index, index.with_suffix(".f32")


def row_of(index: Path, text: str) -> int:
    key = text_key(text)
    return next(int(line.split()[1]) for line in index.read_text().splitlines()[1:] if key in line)


def test_a_nan_row_in_the_cache_is_damage_not_a_zero_score(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = build_model(tmp_path / "model")
    first, _ = run(tmp_path, model)
    index, vectors = cache_files(tmp_path)
    reference = "dog ran"  # example 4's closest reference, and no candidate
    matrix = np.fromfile(vectors, dtype=np.float32).reshape(-1, 4)
    matrix[row_of(index, reference)] = np.nan
    matrix.tofile(vectors)
    with caplog.at_level("WARNING"):
        second, seen = run(tmp_path, model)
    # Unchecked, the NaN vector normalised to zeros: example 4 lost its closest reference.
    assert second == first
    assert reference in seen  # embedded again
    assert str(vectors) in caplog.text and text_key(reference) in caplog.text
    assert "NaN or infinite" in caplog.text
    # Stored again after the damaged row: the next run reads it from the cache, quietly.
    caplog.clear()
    with caplog.at_level("WARNING"):
        third, seen = run(tmp_path, model)
    assert third == first and reference not in seen and "NaN" not in caplog.text


@pytest.mark.timeout(60)
@pytest.mark.parametrize(
    ("which", "kind"), [("idx", "fifo"), ("f32", "fifo"), ("idx", "dev-zero"), ("f32", "dev-zero")]
)
def test_a_cache_file_that_is_not_regular_is_an_error_naming_it(
    tmp_path: Path, which: str, kind: str
) -> None:
    model = build_model(tmp_path / "model")
    run(tmp_path, model)
    index, vectors = cache_files(tmp_path)
    path = index if which == "idx" else vectors
    path.unlink()
    if kind == "fifo":
        os.mkfifo(path)  # unchecked, reading it waited for a writer forever
    else:
        path.symlink_to("/dev/zero")  # unchecked, read until memory ran out
    with pytest.raises(GoldgateError) as raised:
        run(tmp_path, model)
    described = "a FIFO (named pipe)" if kind == "fifo" else "a character device"
    assert str(path) in str(raised.value) and described in str(raised.value)


def test_only_the_rows_looked_up_are_read(tmp_path: Path) -> None:
    model = build_model(tmp_path / "model")
    first, _ = run(tmp_path, model)
    _, vectors = cache_files(tmp_path)
    with vectors.open("r+b") as handle:
        handle.truncate(512 << 20)  # sparse: orphan rows no index line points at
    tracemalloc.start()
    try:
        second, seen = run(tmp_path, model)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # Unbounded, the whole file was read: a 512 MiB array for 5 vectors of 16 bytes.
    assert second == first and set(seen) == set(CANDIDATES)
    assert peak < 32 << 20


def test_the_cache_is_never_written_through_a_symbolic_link(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = build_model(tmp_path / "model")
    run(tmp_path, model)
    index, vectors = cache_files(tmp_path)
    victims = []
    for path in (index, vectors):
        victim = tmp_path / f"victim-{path.suffix[1:]}"
        victim.write_bytes(b"precious\n")
        path.unlink()
        path.symlink_to(victim)
        victims.append(victim)
    with caplog.at_level("WARNING"):
        second, _ = run(tmp_path, model)
    assert [v.read_bytes() for v in victims] == [b"precious\n", b"precious\n"]
    assert "is a symbolic link; goldgate does not write through it" in caplog.text
    assert len(second) == len(ROWS)


@pytest.mark.timeout(60)
def test_a_fifo_in_the_model_folder_is_an_error_naming_it(tmp_path: Path) -> None:
    model = build_model(tmp_path / "model")
    (model / "tokenizer.json").unlink()
    os.mkfifo(model / "tokenizer.json")  # unchecked, the loader waited for a writer forever
    with pytest.raises(GoldgateError, match=r"tokenizer\.json' is not a regular file"):
        run(tmp_path, model)


def test_a_model_file_larger_than_its_kind_is_refused(tmp_path: Path) -> None:
    model = build_model(tmp_path / "model")
    with (model / "model.safetensors").open("r+b") as handle:
        size = handle.seek(0, 2)
        handle.truncate(size + (1 << 30))  # a sparse gigabyte past what the header accounts for
    with pytest.raises(GoldgateError, match="where its header accounts for"):
        run(tmp_path, model)
    model = build_model(tmp_path / "model2")
    with (model / "config.json").open("r+b") as handle:
        handle.truncate(1 << 30)
    with pytest.raises(GoldgateError, match=r"config\.json' holds 1,073,741,824 bytes"):
        run(tmp_path, model)
