"""``embedding_similarity`` with ``encoder: sentence_transformers``.

goldgate's test environment does not install sentence-transformers: it brings torch, whose
default Linux build from PyPI is a CUDA one of several GB (a CPU-only build is not on the
registries CI can reach). So the adapter is tested here against a minimal stand-in module
that speaks the same small API goldgate uses (``SentenceTransformer(path, device=...,
local_files_only=...)``, ``encode``, ``state_dict``, ``tokenizer``): what is checked is how
goldgate calls the library, scores what it returns and hashes the model — not the library.

Where sentence-transformers *is* installed, the last test builds a real tiny model
(``StaticEmbedding`` over the same hand-made vectors and ``tokenizers`` vocabulary as the
model2vec tests), saves it, loads it through the configured-path route and checks the scores
against numpy; elsewhere it is skipped.
"""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldgate.errors import MetricError
from goldgate.metrics.batch import MetricContext
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric
from tests.metrics.test_embedding import ROWS, VECTORS, WORDS, numpy_similarity

CANDIDATES = [row["candidate"] for row in ROWS]
REFERENCES = [row["references"] for row in ROWS]


class _Tensor:
    """What ``state_dict()`` values offer goldgate: detach, cpu, dtype, shape, numpy."""

    def __init__(self, array: np.ndarray) -> None:
        self.array = array
        self.dtype = f"stand-in.{array.dtype}"
        self.shape = array.shape

    def detach(self) -> _Tensor:
        return self

    def cpu(self) -> _Tensor:
        return self

    def numpy(self) -> np.ndarray:
        return self.array


class _Tokenizer:
    def __init__(self, vocab: dict[str, int]) -> None:
        self.vocab = vocab

    def get_vocab(self) -> dict[str, int]:
        return dict(self.vocab)


def stand_in_module(calls: list[tuple[str, Any]]) -> types.ModuleType:
    """A ``sentence_transformers`` module whose models are ``vectors.npy`` + ``model.json``
    (vocabulary and pooling) in a directory: mean of the known words' vectors."""

    class SentenceTransformer:
        def __init__(self, source: str, *, device: str, local_files_only: bool) -> None:
            calls.append(("load", (source, device, local_files_only)))
            folder = Path(source)
            if not (folder / "model.json").is_file():
                raise OSError(f"{source} is not a sentence-transformers model folder")
            config = json.loads((folder / "model.json").read_text(encoding="utf-8"))
            self.vectors = np.load(folder / "vectors.npy")
            self.tokenizer = _Tokenizer(config["vocab"])
            self.pooling = config["pooling"]

        def __str__(self) -> str:
            return f"SentenceTransformer(StaticEmbedding, Pooling({self.pooling!r}))"

        def state_dict(self) -> dict[str, _Tensor]:
            return {"0.embedding.weight": _Tensor(self.vectors)}

        def encode(
            self, texts: list[str], *, convert_to_numpy: bool, show_progress_bar: bool
        ) -> np.ndarray:
            calls.append(("encode", (list(texts), convert_to_numpy, show_progress_bar)))
            out = np.zeros((len(texts), self.vectors.shape[1]), dtype=np.float32)
            for row, text in enumerate(texts):
                ids = [self.tokenizer.vocab[w] for w in text.lower().split() if w in WORDS]
                if ids:
                    out[row] = self.vectors[ids].mean(axis=0)
            return out

    module = types.ModuleType("sentence_transformers")
    module.SentenceTransformer = SentenceTransformer  # type: ignore[attr-defined]
    return module


def save_stand_in(
    directory: Path, vectors: np.ndarray = VECTORS, pooling: str = "mean", extra_word: bool = False
) -> Path:
    directory.mkdir(parents=True)
    vocab = {"[UNK]": 0, "[PAD]": 1, **{word: i + 2 for i, word in enumerate(WORDS)}}
    if extra_word:
        vocab["zebra"] = 0
    np.save(directory / "vectors.npy", vectors)
    (directory / "model.json").write_text(json.dumps({"vocab": vocab, "pooling": pooling}))
    return directory


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Any]]:
    recorded: list[tuple[str, Any]] = []
    monkeypatch.setitem(sys.modules, "sentence_transformers", stand_in_module(recorded))
    return recorded


def st_metric(tmp_path: Path, **options: Any) -> Any:
    metric = create_metric("embedding_similarity", {"encoder": "sentence_transformers", **options})
    metric.bind(MetricContext(root=tmp_path, cache_dir=tmp_path / ".goldgate"))  # type: ignore[attr-defined]
    return metric


def test_scores_equal_numpy_and_the_model_is_loaded_locally_on_the_cpu(
    tmp_path: Path, calls: list[tuple[str, Any]]
) -> None:
    save_stand_in(tmp_path / "models" / "st")
    metric = st_metric(tmp_path, model="models/st")
    (result,) = score_corpus([("e", metric)], CANDIDATES, REFERENCES)
    expected = [numpy_similarity(c, r) for c, r in zip(CANDIDATES, REFERENCES, strict=True)]
    assert result.per_example() == pytest.approx(expected, abs=1e-4)
    # A configured directory: resolved against the configuration's root, never the hub.
    assert calls[0] == ("load", (str(tmp_path / "models" / "st"), "cpu", True))
    encodes = [args for kind, args in calls if kind == "encode"]
    assert encodes and all(args[1:] == (True, False) for args in encodes)
    signature = str(result.signature)
    assert "enc:sentence_transformers|model:models/st|hash:" in signature


def test_a_hub_id_is_the_only_way_to_let_the_library_download(
    tmp_path: Path, calls: list[tuple[str, Any]]
) -> None:
    metric = st_metric(tmp_path, hub_id="org/some-model")
    with pytest.raises(MetricError, match="cannot load the sentence-transformers model"):
        score_corpus([("e", metric)], ["a"], [["b"]])
    assert calls == [("load", ("org/some-model", "cpu", False))]


def test_the_hash_follows_weights_modules_and_vocabulary(
    tmp_path: Path, calls: list[tuple[str, Any]]
) -> None:
    changed = VECTORS.copy()
    changed[3, 0] = 0.99
    folders = {
        "first": save_stand_in(tmp_path / "first"),
        "same": save_stand_in(tmp_path / "same"),
        "weights": save_stand_in(tmp_path / "weights", changed),
        "pooling": save_stand_in(tmp_path / "pooling", pooling="cls"),
        "vocab": save_stand_in(tmp_path / "vocab", extra_word=True),
    }
    hashes = {
        name: dict(st_metric(tmp_path, model=str(path)).signature([1]).fields)["hash"]
        for name, path in folders.items()
    }
    assert hashes["first"] == hashes["same"]
    assert len({hashes[name] for name in ("first", "weights", "pooling", "vocab")}) == 4


def test_a_missing_library_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)  # import fails
    save_stand_in(tmp_path / "st")
    metric = st_metric(tmp_path, model="st")
    with pytest.raises(MetricError, match=r"needs the sentence_transformers package \(pip inst"):
        score_corpus([("e", metric)], ["a"], [["b"]])


def test_a_real_tiny_sentence_transformers_model(tmp_path: Path) -> None:
    """Only where sentence-transformers (and torch) are installed: not in goldgate's CI."""
    pytest.importorskip("sentence_transformers")
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    try:  # its home since sentence-transformers 6; `models` before
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding
    except ImportError:
        from sentence_transformers.models import StaticEmbedding

    vocab = {"[UNK]": 0, "[PAD]": 1, **{word: i + 2 for i, word in enumerate(WORDS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    static = StaticEmbedding(tokenizer, embedding_weights=VECTORS)
    SentenceTransformer(modules=[static], device="cpu").save(str(tmp_path / "models" / "st"))
    metric = st_metric(tmp_path, model="models/st")
    (result,) = score_corpus([("e", metric)], CANDIDATES, REFERENCES)
    expected = [numpy_similarity(c, r) for c, r in zip(CANDIDATES, REFERENCES, strict=True)]
    assert result.per_example() == pytest.approx(expected, abs=1e-3)
    assert "enc:sentence_transformers|model:models/st|hash:" in str(result.signature)
