"""``embedding_similarity`` with a real model2vec model built here from hand-made vectors.

The model is saved to disk and loaded through the same path a user's model takes (a
configured directory); every score is checked against a direct numpy computation from the
hand-made vectors. No network: a missing directory must be an error, never a download.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from goldgate.cli.main import main
from goldgate.metrics.batch import MetricContext
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric, metric_from_spec

pytest.importorskip("model2vec")

WORDS = ["the", "cat", "sat", "on", "mat", "dog", "ran", "far", "away", "a", "red", "car"]
# Hand-made 4-dimensional vectors; some words point in similar directions, some opposite.
VECTORS = np.array(
    [
        [0.0, 0.0, 0.0, 0.0],  # [UNK]: model2vec drops unknown tokens
        [0.0, 0.0, 0.0, 0.0],  # [PAD]
        [0.1, 0.1, 0.1, 0.1],  # the
        [1.0, 0.2, 0.0, 0.0],  # cat
        [0.0, 1.0, 0.3, 0.0],  # sat
        [0.0, 0.1, 0.1, 0.0],  # on
        [0.2, 0.0, 1.0, 0.0],  # mat
        [0.9, 0.3, 0.0, 0.1],  # dog
        [0.0, 0.8, 0.0, 0.5],  # ran
        [0.0, 0.0, 0.2, 1.0],  # far
        [0.0, 0.1, 0.0, 0.9],  # away
        [0.05, 0.05, 0.0, 0.0],  # a
        [-1.0, 0.0, 0.0, 0.0],  # red
        [-0.8, -0.5, 0.0, 0.0],  # car
    ],
    dtype=np.float32,
)

ROWS: list[dict[str, Any]] = [
    {"candidate": "the cat sat on the mat", "references": ["the cat sat on the mat"]},
    {"candidate": "the dog sat", "references": ["a cat sat", "the dog ran far away"]},
    {"candidate": "a red car", "references": ["the cat"]},  # opposite: clipped to 0
    {"candidate": "zebra", "references": ["the cat sat"]},  # only unknown words: 0
    {"candidate": "The DOG ran away", "references": ["dog ran", "far away", "mat"]},
]


def build_model(directory: Path, vectors: np.ndarray = VECTORS) -> Path:
    """A model2vec model from a ``tokenizers`` word vocabulary, saved as a user's would be."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    vocab = {"[UNK]": 0, "[PAD]": 1, **{word: i + 2 for i, word in enumerate(WORDS)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=False).save_pretrained(
        str(directory)
    )
    return directory


def numpy_embedding(text: str) -> np.ndarray:
    """Mean of the known words' vectors (what a static model computes), by hand."""
    rows = [VECTORS[WORDS.index(w) + 2] for w in text.lower().split() if w in WORDS]
    return np.mean(rows, axis=0).astype(np.float64) if rows else np.zeros(4)


def numpy_similarity(candidate: str, references: list[str]) -> float:
    def cosine(a: np.ndarray, b: np.ndarray) -> float:
        na, nb = np.linalg.norm(a), np.linalg.norm(b)
        return float(a @ b / (na * nb)) if na and nb else 0.0

    c = numpy_embedding(candidate)
    best = max(cosine(c, numpy_embedding(r)) for r in references)
    return 100.0 * min(max(best, 0.0), 1.0)


@pytest.fixture
def model_dir(tmp_path: Path) -> Path:
    return build_model(tmp_path / "models" / "tiny")


def write_rows(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_score_command_equals_numpy(
    tmp_path: Path, model_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_rows(tmp_path / "data.jsonl", ROWS)
    spec = f"embedding_similarity:model={model_dir}"
    code = main(
        ["score", str(data), "--metric", spec, "--per-example", "--json", "--cache-dir",
         str(tmp_path / "cache")]
    )  # fmt: skip
    out, err = capsys.readouterr()
    assert code == 0, err
    entry = json.loads(out)["metrics"][spec]
    expected = [numpy_similarity(row["candidate"], row["references"]) for row in ROWS]
    assert entry["per_example"] == pytest.approx(expected, abs=1e-4)
    assert entry["score"] == pytest.approx(float(np.mean(expected)), abs=1e-4)
    # The cases the rows were written for: identical, opposite (clipped) and unknown words.
    assert expected[0] == pytest.approx(100.0)
    assert expected[2] == 0.0 and expected[3] == 0.0
    assert 0.0 < expected[1] < 100.0 and 0.0 < expected[4] < 100.0
    signature = entry["signature"]
    assert "enc:model2vec" in signature and f"model:{model_dir}" in signature
    assert "|hash:" in signature


def test_relative_model_path_resolves_against_the_context_root(model_dir: Path) -> None:
    metric = create_metric("embedding_similarity", {"model": "models/tiny"})
    context = MetricContext(root=model_dir.parent.parent, cache_dir=None)
    (result,) = score_corpus([("e", metric)], ["the cat"], [["the cat sat"]], context=context)
    assert result.per_example()[0] == pytest.approx(numpy_similarity("the cat", ["the cat sat"]))


def test_signature_hash_follows_the_weights(tmp_path: Path) -> None:
    first = build_model(tmp_path / "a")
    same = build_model(tmp_path / "b")
    changed_vectors = VECTORS.copy()
    changed_vectors[3, 0] = 0.99
    changed = build_model(tmp_path / "c", changed_vectors)

    def hash_of(path: Path) -> str:
        metric = metric_from_spec(f"embedding_similarity:model={path}")
        return dict(metric.signature([1]).fields)["hash"]

    assert hash_of(first) == hash_of(same)
    assert hash_of(first) != hash_of(changed)


def test_reference_embeddings_are_cached_so_a_rerun_embeds_only_candidates(
    tmp_path: Path, model_dir: Path
) -> None:
    context = MetricContext(root=tmp_path, cache_dir=tmp_path / ".goldgate")
    candidates = [row["candidate"] for row in ROWS]
    references = [row["references"] for row in ROWS]

    def run() -> tuple[list[float], list[list[str]]]:
        metric = create_metric("embedding_similarity", {"model": str(model_dir)})
        metric.bind(context)
        encoder = metric.encoder  # type: ignore[attr-defined]
        seen: list[list[str]] = []
        original = encoder.encode

        def counting(texts: list[str]) -> Any:
            seen.append(list(texts))
            return original(texts)

        encoder.encode = counting
        (result,) = score_corpus([("e", metric)], candidates, references, context=context)
        return result.per_example(), seen

    first, seen_first = run()
    all_refs = {text for refs in references for text in refs}
    assert all_refs <= {text for batch in seen_first for text in batch}
    second, seen_second = run()
    assert second == first
    assert {text for batch in seen_second for text in batch} == set(candidates)
    assert list((tmp_path / ".goldgate" / "embeddings").glob("*.idx"))

    # A damaged index (a line cut short, garbage) loses those entries only, never the run.
    index = next((tmp_path / ".goldgate" / "embeddings").glob("*.idx"))
    index.write_text(index.read_text().splitlines()[0] + "\nabc 1\nxx", encoding="ascii")
    third, _ = run()
    assert third == first


def test_a_missing_model_directory_is_an_error_not_a_download(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import model2vec

    def no_download(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("must not try to load (or download) a missing model")

    monkeypatch.setattr(model2vec.StaticModel, "from_pretrained", no_download)
    data = write_rows(tmp_path / "data.jsonl", ROWS[:1])
    code = main(["score", str(data), "--metric", "embedding_similarity:model=no/such/model"])
    _, err = capsys.readouterr()
    assert code == 2
    assert "no/such/model" in err and "does not exist" in err and "hub_id" in err


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({}, "exactly one of model"),
        ({"model": "m", "hub_id": "org/m"}, "exactly one of model"),
        ({"encoder": "function"}, "needs function"),
        ({"model": "m", "function": "a:b"}, "function is for encoder"),
        ({"model": "m", "encoder": "bert"}, "encoder"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], message: str) -> None:
    from goldgate.errors import MetricError

    with pytest.raises(MetricError, match=message):
        create_metric("embedding_similarity", options)


def test_a_user_function_encoder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "my_vectors.py").write_text(
        textwrap.dedent(
            """
            def encode(texts):
                return [[len(t), t.count("a") + 1.0] for t in texts]

            def broken(texts):
                return [[1.0, 2.0]]
            """
        ),
        encoding="utf-8",
    )
    context = MetricContext(root=tmp_path, cache_dir=None)
    metric = create_metric(
        "embedding_similarity", {"encoder": "function", "function": "my_vectors:encode"}
    )
    metric.bind(context)  # type: ignore[attr-defined]
    (result,) = score_corpus([("e", metric)], ["aaa", "bb"], [["ab"], ["bb", "a"]])
    a, b = np.array([3.0, 4.0]), np.array([2.0, 2.0])
    expected = 100 * float(a @ b / np.linalg.norm(a) / np.linalg.norm(b))
    assert result.per_example() == pytest.approx([expected, 100.0])
    assert "enc:function|model:my_vectors:encode" in str(result.signature)

    from goldgate.errors import MetricError

    broken = create_metric(
        "embedding_similarity", {"encoder": "function", "function": "my_vectors:broken"}
    )
    broken.bind(context)  # type: ignore[attr-defined]
    with pytest.raises(MetricError, match=r"expected 2 vectors"):
        score_corpus([("e", broken)], ["aaa", "bb"], [["ab"], ["bb"]])


def test_other_metrics_never_import_the_encoders() -> None:
    """Runtime imports model2vec only when embedding_similarity is used."""
    code = textwrap.dedent(
        """
        import sys
        from goldgate.metrics.registry import create_metric
        from goldgate.metrics.engine import score_corpus
        import goldgate.metrics.semantic.embedding, goldgate.runner, goldgate.model.config
        create_metric("embedding_similarity", {"model": "m"})
        score_corpus([("b", create_metric("bleu"))], ["a b"], [["a b"]])
        heavy = {"model2vec", "tokenizers", "safetensors", "huggingface_hub", "torch"}
        print(sorted(heavy & set(sys.modules)))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_gate_end_to_end_bless_then_regression(
    tmp_path: Path,
    model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Through the real command: bless, an unchanged run passes, worse outputs exit 1."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    goldens = [
        {
            "id": f"ex{i}",
            "input": f"q{i}",
            "references": [ref],
            "tags": ["even" if i % 2 else "odd"],
        }
        for i, ref in enumerate(["the cat sat on the mat", "the dog ran far away"] * 10)
    ]
    write_rows(tmp_path / "goldens.jsonl", goldens)
    (tmp_path / "out").mkdir()

    def outputs(texts: list[str]) -> None:
        rows = [{"id": g["id"], "output": t} for g, t in zip(goldens, texts, strict=True)]
        write_rows(tmp_path / "out" / "sem.jsonl", rows)

    (tmp_path / "goldgate.yaml").write_text(
        textwrap.dedent(
            """
            version: 1
            system: {predictions: "out/{suite}.jsonl"}
            suites:
              sem:
                goldens: goldens.jsonl
                metrics:
                  embedding_similarity: {model: models/tiny}
                gate:
                  embedding_similarity: {min: 50, max_drop: 2.0}
            report: {formats: [md, html, json]}
            """
        ),
        encoding="utf-8",
    )
    good = ["a cat sat on a mat", "the dog ran away"] * 10
    outputs(good)
    assert main(["bless", "-q"]) == 0
    assert main(["run"]) == 0
    capsys.readouterr()
    result = json.loads((tmp_path / "goldgate-report" / "result.json").read_text())
    metric = result["suites"][0]["metrics"][0]
    assert metric["metric"] == "embedding_similarity"
    pairs = zip(good, goldens, strict=True)
    expected = np.mean([numpy_similarity(t, g["references"]) for t, g in pairs])
    assert metric["current"] == pytest.approx(expected, abs=1e-3)
    # Half the outputs become unrelated: a real, significant drop.
    outputs([("a red car" if i % 2 else text) for i, text in enumerate(good)])
    assert main(["run"]) == 1
    out, _ = capsys.readouterr()
    assert "embedding_similarity" in out
    assert main(["check"]) == 0
