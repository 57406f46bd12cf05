"""``embedding_similarity``: cosine similarity of a candidate's embedding to its closest reference.

Per example the score is ``100 * max(0, max_r cos(e(candidate), e(r)))``; the corpus score is
the mean, so the statistics are ``(similarity, 1)`` per example and slices and the bootstrap
work as for any metric. A text the model cannot represent (empty, or only unknown tokens)
embeds as a zero vector and scores 0 against anything. A negative cosine counts as 0: the
scale is 0–100 like every other score, and "unrelated" and "opposite" are equally wrong here.

The encoder is never chosen for the user and nothing is downloaded unless the configuration
names a hub id (``hub_id``); ``model`` is a local directory that must exist. Encoders:

- ``model2vec`` (``pip install 'goldgate[embed]'``): static embeddings, numpy only, thousands
  of sentences a second on a CPU — the recommended one;
- ``sentence_transformers``: any sentence-transformers model, when that library is installed
  (``pip install sentence-transformers``: not an extra of goldgate, as it brings torch);
- ``function``: the user's ``module:function`` taking a list of texts, returning vectors.

The signature records the encoder, the model as configured and a hash of its weights (and,
for a function, of its module's source), so a changed model is never compared with an old
baseline. Reference embeddings are cached on disk by that hash and the text
(:mod:`goldgate.metrics.semantic.vector_cache`); candidates are embedded on every run.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
import stat
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from goldgate.errors import MetricError
from goldgate.metrics.base import MetricOptions, option, ratio_scores
from goldgate.metrics.batch import Batch, BatchMetric, BatchStats
from goldgate.metrics.semantic.vector_cache import VectorCache

Encoder = Literal["model2vec", "sentence_transformers", "function"]
_EXTRA = "pip install 'goldgate[embed]'"
#: files of weights, whose size their own format accounts for (safetensors is checked here)
_WEIGHTS = (".safetensors", ".bin", ".pt", ".pth", ".onnx", ".h5", ".msgpack", ".npy", ".gguf")
#: the most any other file of a model folder may hold (configurations, tokenizers,
#: vocabularies, model cards: the largest tokenizers are tens of MB)
_MAX_MODEL_FILE = 256 << 20
#: the most entries a model folder's walk visits
_MAX_MODEL_ENTRIES = 10_000


class EmbeddingOptions(MetricOptions):
    """Which encoder embeds the texts, and from where it is loaded (never a silent download)."""

    encoder: Encoder = "model2vec"
    model: str | None = None  # a local model directory, relative to the configuration's
    hub_id: str | None = None  # a hub id to download (model2vec, sentence_transformers)
    function: str | None = None  # module:function returning vectors (encoder: function)
    batch_size: int = option(default=1024, ge=1)

    def __post_init__(self) -> None:
        if self.encoder == "function":
            if not self.function or ":" not in self.function:
                raise ValueError("encoder 'function' needs function: 'package.module:function'")
            if self.hub_id is not None:
                raise ValueError("encoder 'function' takes no hub_id")
            return
        if self.function is not None:
            raise ValueError(f"function is for encoder 'function', not {self.encoder!r}")
        if (self.model is None) == (self.hub_id is None):
            raise ValueError(
                "give exactly one of model (a local model directory) and hub_id (a model id"
                " to download); goldgate never picks a model for you"
            )


@dataclass
class LoadedEncoder:
    """A ready encoder: a function from texts to vectors, and what identifies its weights."""

    encode: Callable[[list[str]], Any]
    model_id: str
    weights_hash: str


class EmbeddingSimilarity(BatchMetric[EmbeddingOptions]):
    """Cosine similarity (0–100) of the candidate's embedding to the closest reference's."""

    name = "embedding_similarity"
    Options = EmbeddingOptions
    stat_names = ("similarity_sum", "examples")

    def __init__(self, options: EmbeddingOptions) -> None:
        super().__init__(options)
        self._encoder: LoadedEncoder | None = None

    # -- the encoder, loaded once on first use ----------------------------------------------
    @property
    def encoder(self) -> LoadedEncoder:
        """The loaded encoder (loading it the first time)."""
        if self._encoder is None:
            self._encoder = _load(self.options, self)
        return self._encoder

    def signature_fields(self) -> list[tuple[str, str]]:
        encoder = self.encoder
        return [
            ("enc", self.options.encoder),
            ("model", encoder.model_id),
            ("hash", encoder.weights_hash[:16]),
            ("sim", "cos-max-clip0"),
        ]

    # -- statistics -------------------------------------------------------------------------
    def corpus_stats(self, batch: Batch) -> BatchStats:
        if not batch.candidates:
            return BatchStats([])
        references = _distinct(text for refs in batch.references for text in refs)
        candidates = _distinct(batch.candidates)
        ref_vectors = self._reference_vectors(references)
        cand_vectors = _normalise(self._embed(candidates))
        ref_row = {text: row for row, text in enumerate(references)}
        cand_row = {text: row for row, text in enumerate(candidates)}
        # Every (example, reference) pair in example order, then the max within each example.
        pair_cand = np.asarray(
            [
                cand_row[c]
                for c, refs in zip(batch.candidates, batch.references, strict=True)
                for _ in refs
            ],
            dtype=np.int64,
        )
        pair_ref = np.asarray(
            [ref_row[text] for refs in batch.references for text in refs], dtype=np.int64
        )
        cosines = np.einsum("ij,ij->i", cand_vectors[pair_cand], ref_vectors[pair_ref])
        starts = np.cumsum([0] + [len(refs) for refs in batch.references[:-1]])
        best = np.maximum.reduceat(cosines, starts)
        scores = 100.0 * np.clip(best, 0.0, 1.0)
        return BatchStats([(float(value), 1.0) for value in scores.tolist()])

    def score_stats(self, stats: Sequence[float]) -> float:
        return stats[0] / stats[1] if stats[1] else 0.0

    def _embed(self, texts: list[str]) -> npt.NDArray[np.float64]:
        encoder = self.encoder
        size = self.options.batch_size
        blocks = [
            _check_vectors(encoder.encode(texts[i : i + size]), len(texts[i : i + size]), self)
            for i in range(0, len(texts), size)
        ]
        return np.vstack(blocks) if blocks else np.zeros((0, 0))

    def _reference_vectors(self, texts: list[str]) -> npt.NDArray[np.float64]:
        """Normalised reference embeddings, from the on-disk cache where they are."""
        cache_dir = self.context.cache_dir
        if cache_dir is None:
            return _normalise(self._embed(texts))
        cache = VectorCache(cache_dir / "embeddings", self.encoder.weights_hash)
        found = cache.lookup(texts)
        missing = [text for text in texts if text not in found]
        if missing:
            fresh = self._embed(missing)
            cache.store(missing, fresh.astype(np.float32))
            found.update(zip(missing, fresh.astype(np.float32), strict=True))
        return _normalise(np.vstack([found[text] for text in texts]).astype(np.float64))

    def example_scores(self, stats: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """``score_stats`` of every row, as arrays (see ``Metric.example_scores``)."""
        if self._scalar_scores_replaced(EmbeddingSimilarity):
            return super().example_scores(stats)
        return ratio_scores(stats[:, 0], stats[:, 1])


def _distinct(texts: Any) -> list[str]:
    return list(dict.fromkeys(texts))


def _normalise(vectors: npt.NDArray[Any]) -> npt.NDArray[np.float64]:
    array = np.asarray(vectors, dtype=np.float64)
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    # A zero vector stays zero: its cosine with anything is 0.
    out: npt.NDArray[np.float64] = np.zeros_like(array)
    np.divide(array, norms, out=out, where=norms > 0)
    return out


def _check_vectors(value: Any, count: int, metric: EmbeddingSimilarity) -> npt.NDArray[np.float64]:
    label = f"embedding_similarity ({metric.options.encoder} {metric.encoder.model_id})"
    try:
        array = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise MetricError(
            f"{label}: the encoder returned {type(value).__name__}, not vectors"
        ) from None
    if array.ndim != 2 or array.shape[0] != count or array.shape[1] == 0:
        raise MetricError(
            f"{label}: expected {count} vectors (an array of shape ({count}, dim)), got shape"
            f" {array.shape}"
        )
    if not np.isfinite(array).all():
        raise MetricError(f"{label}: the encoder returned NaN or infinite values")
    return array


# -- loading ---------------------------------------------------------------------------------


def _load(options: EmbeddingOptions, metric: EmbeddingSimilarity) -> LoadedEncoder:
    if options.encoder == "function":
        return _load_function(options.function or "", metric)
    if options.model is not None:
        path = metric.context.resolve(options.model)
        if not path.is_dir():
            # model2vec and sentence-transformers would take a missing path for a hub id and
            # download it: a typo must not turn into a download.
            raise MetricError(
                f"embedding_similarity: model directory {str(path)!r} does not exist (model:"
                f" {options.model!r}); to download from a hub, set hub_id instead"
            )
        _check_model_folder(path)
        source, model_id = str(path), options.model
    else:
        source = model_id = options.hub_id or ""
    if options.encoder == "model2vec":
        return _load_model2vec(source, model_id)
    return _load_sentence_transformers(source, model_id, local=options.model is not None)


def _check_model_folder(folder: Path) -> None:
    """Refuse a model folder that holds what no model does: a FIFO or a device (a loader would
    hang on it or read forever), a non-weights file past :data:`_MAX_MODEL_FILE`, or a
    safetensors file larger than its own header says. Links to regular files are followed
    (the Hugging Face cache links its files to blobs)."""
    seen = 0
    for directory, _, names in os.walk(folder):
        for name in names:
            seen += 1
            if seen > _MAX_MODEL_ENTRIES:
                raise MetricError(
                    f"embedding_similarity: model directory {str(folder)!r} holds more than"
                    f" {_MAX_MODEL_ENTRIES:,} files; a model folder holds a few"
                )
            _check_model_file(Path(directory) / name)


def _check_model_file(path: Path) -> None:
    def refuse(why: str) -> MetricError:
        return MetricError(f"embedding_similarity: model file {str(path)!r} {why}")

    try:
        info = path.stat()  # a link to a regular file is what the Hugging Face cache holds
    except OSError as exc:
        raise refuse(f"cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise refuse("is not a regular file (a FIFO, a device or a socket); remove it")
    if path.suffix.lower() == ".safetensors":
        _check_safetensors(path, info.st_size, refuse)
    elif path.suffix.lower() not in _WEIGHTS and info.st_size > _MAX_MODEL_FILE:
        raise refuse(
            f"holds {info.st_size:,} bytes, more than the {_MAX_MODEL_FILE:,} a model's"
            " configuration or tokenizer file may"
        )


def _check_safetensors(path: Path, size: int, refuse: Callable[[str], MetricError]) -> None:
    """A safetensors file must be as long as its header says: 8 bytes, the header, the data."""
    try:
        with path.open("rb") as handle:
            length = int.from_bytes(handle.read(8), "little")
            if not 0 < length <= min(size - 8, 100 << 20):
                raise ValueError(f"a header of {length:,} bytes")
            header = json.loads(handle.read(length))
        ends = [
            entry["data_offsets"][1] for name, entry in header.items() if name != "__metadata__"
        ]
        expected = 8 + length + max(ends, default=0)
    except (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError) as exc:
        raise refuse(f"is not a safetensors file: {exc}") from None
    if not isinstance(expected, int) or size != expected:
        raise refuse(f"holds {size:,} bytes where its header accounts for {expected:,}")


def _missing(library: str, exc: ImportError, install: str = _EXTRA) -> MetricError:
    return MetricError(
        f"embedding_similarity: the {library} encoder needs the {library} package"
        f" ({install}): {exc}"
    )


def _load_model2vec(source: str, model_id: str) -> LoadedEncoder:
    try:
        from model2vec import StaticModel
    except ImportError as exc:
        raise _missing("model2vec", exc) from None
    try:
        model = StaticModel.from_pretrained(source, force_download=False)
    except Exception as exc:  # a damaged model folder raises anything from three libraries
        raise MetricError(
            f"embedding_similarity: cannot load the model2vec model {model_id!r}:"
            f" {type(exc).__name__}: {exc}"
        ) from None
    digest = hashlib.sha256()
    for array in (model.embedding, model.weights, model.token_mapping):
        if array is not None:
            data = np.ascontiguousarray(array)
            digest.update(f"{data.dtype.str}{data.shape}".encode())
            digest.update(data.tobytes())
    digest.update(model.tokenizer.to_str().encode("utf-8"))
    digest.update(json.dumps([model.normalize, model.max_length], default=str).encode())

    def encode(texts: list[str]) -> Any:
        return model.encode(texts, use_multiprocessing=False, batch_size=1024)

    return LoadedEncoder(encode, model_id, digest.hexdigest())


def _load_sentence_transformers(source: str, model_id: str, *, local: bool) -> LoadedEncoder:
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        # Not behind goldgate's embed extra: it brings torch (a CUDA build of several GB by
        # default on Linux); the user installs the build they want.
        raise _missing("sentence_transformers", exc, _ST_INSTALL) from None
    try:
        model = SentenceTransformer(source, device="cpu", local_files_only=local)
    except Exception as exc:  # the library and torch raise many kinds
        raise MetricError(
            f"embedding_similarity: cannot load the sentence-transformers model {model_id!r}:"
            f" {type(exc).__name__}: {exc}"
        ) from None
    return LoadedEncoder(_st_encode(model), model_id, _st_digest(model))


#: How to get the sentence_transformers encoder (a CPU build of torch first, where wanted).
_ST_INSTALL = "pip install sentence-transformers"


def _st_digest(model: Any) -> str:
    """A sentence-transformers model's identity: its weights, and what the weights alone do
    not say — the modules and their settings (pooling, normalisation, max length) as the
    model prints them, and the tokenizer's vocabulary."""
    digest = hashlib.sha256(str(model).encode("utf-8"))
    tokenizer: Any = getattr(model, "tokenizer", None)
    backend: Any = getattr(tokenizer, "backend_tokenizer", tokenizer)
    if hasattr(backend, "to_str"):
        digest.update(backend.to_str().encode("utf-8"))
    elif hasattr(tokenizer, "get_vocab"):
        digest.update(json.dumps(tokenizer.get_vocab(), sort_keys=True).encode("utf-8"))
    for key, tensor in sorted(model.state_dict().items()):
        values = tensor.detach().cpu()
        digest.update(f"{key}|{values.dtype}|{tuple(values.shape)}".encode())
        try:
            digest.update(values.numpy().tobytes())
        except TypeError:  # bfloat16 and other types numpy lacks: their float32 values
            digest.update(values.float().numpy().tobytes())
    return digest.hexdigest()


def _st_encode(model: Any) -> Callable[[list[str]], Any]:
    def encode(texts: list[str]) -> Any:
        return model.encode(texts, convert_to_numpy=True, show_progress_bar=False)

    return encode


def _load_function(path: str, metric: EmbeddingSimilarity) -> LoadedEncoder:
    module_name, _, attribute = path.partition(":")
    label = f"embedding_similarity: function {path!r}"
    root = str(metric.context.root)
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # the user's module may raise anything while importing
        raise MetricError(f"{label}: cannot import {module_name!r}: {exc}") from None
    obj: Any = module
    for part in attribute.split("."):
        if not hasattr(obj, part):
            raise MetricError(f"{label}: module {module_name!r} has no {attribute!r}")
        obj = getattr(obj, part)
    if not callable(obj):
        raise MetricError(f"{label}: {attribute!r} is not callable")
    # No weights to hash: the module's source stands for the model, so editing it changes
    # the signature.
    digest = hashlib.sha256(path.encode("utf-8"))
    try:
        source = inspect.getsourcefile(module)
        if source is not None:
            with open(source, "rb") as handle:
                digest.update(handle.read())
    except (OSError, TypeError):
        pass
    function: Callable[[list[str]], Any] = obj
    return LoadedEncoder(function, path, digest.hexdigest())
