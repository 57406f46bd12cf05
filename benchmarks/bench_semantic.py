"""Time embedding_similarity on 10,000 examples and the LLM judge's own overhead per call.

(a) ``embedding_similarity`` with a model2vec model built here (a ``tokenizers`` word
    vocabulary of ``--vocab`` words, ``--dim``-dimensional random vectors: the shape of a
    potion-base model) over ``--n`` generated examples with two references each, through
    ``goldgate score`` in a fresh process: the first run embeds references and candidates
    (cold cache), the second reads the references from the cache (warm). Beside it, the same
    numbers computed by a bare script (model2vec ``encode`` + numpy cosines), the floor.
(b) ``llm_judge`` against the fake OpenAI-compatible server of the tests on 127.0.0.1, one
    call at a time: goldgate's time per judgment minus a bare ``urllib`` POST of the same
    request to the same server is goldgate's own cost (prompt, parsing, cache, threads).

    .venv/bin/python benchmarks/bench_semantic.py [--n 10000] [--repeat 3] [--calls 300]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
CHILD = (
    "import resource, sys, time\n"
    "start = time.perf_counter()\n"
    "{body}\n"
    "elapsed = time.perf_counter() - start\n"
    "usage = resource.getrusage(resource.RUSAGE_SELF)\n"
    "cpu, peak = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024\n"
    "print(f'BENCH {{elapsed:.4f}} {{cpu:.4f}} {{peak:.1f}}', file=sys.stderr)\n"
)
GOLDGATE = "from goldgate.cli.main import main\ncode = main(sys.argv[1:])\nassert code == 0, code"
BARE = """
import json
import numpy as np
from model2vec import StaticModel
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
model = StaticModel.from_pretrained(sys.argv[2], force_download=False)
cands = model.encode([r["candidate"] for r in rows], use_multiprocessing=False)
flat = [t for r in rows for t in r["references"]]
vecs = model.encode(flat, use_multiprocessing=False)
def norm(a):
    n = np.linalg.norm(a, axis=1, keepdims=True)
    return np.divide(a, n, out=np.zeros_like(a), where=n > 0)
cands, vecs = norm(cands.astype(np.float64)), norm(vecs.astype(np.float64))
scores, k = [], 0
for i, r in enumerate(rows):
    m = len(r["references"])
    scores.append(100 * min(max(float((vecs[k:k + m] @ cands[i]).max()), 0.0), 1.0))
    k += m
print(json.dumps(sum(scores) / len(scores)))
"""


def build_model(directory: Path, vocab_size: int, dim: int) -> list[str]:
    """A model2vec model over a made-up word vocabulary; returns the words."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers

    words = [f"w{i:05d}" for i in range(vocab_size)]
    vocab = {"[UNK]": 0, "[PAD]": 1, **{w: i + 2 for i, w in enumerate(words)}}
    tokenizer = Tokenizer(models.WordLevel(vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(len(vocab), dim)).astype(np.float32)
    StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=False).save_pretrained(
        str(directory)
    )
    return words


def write_data(path: Path, words: list[str], n: int) -> None:
    """``n`` rows, a candidate and two references of 12–30 Zipf-distributed words each."""
    rng = np.random.default_rng(1)
    ranks = np.minimum(rng.zipf(1.2, size=n * 3 * 30), len(words)) - 1

    def sentence(offset: int) -> str:
        length = 12 + (offset % 19)
        return " ".join(words[r] for r in ranks[offset * 30 : offset * 30 + length])

    with path.open("w", encoding="utf-8") as out:
        for i in range(n):
            row = {
                "candidate": sentence(3 * i),
                "references": [sentence(3 * i + 1), sentence(3 * i + 2)],
            }
            out.write(json.dumps(row) + "\n")


def child(body: str, *argv: str, cwd: Path) -> tuple[float, float, float, str]:
    """Run ``body`` in a fresh interpreter: (wall seconds, CPU seconds, peak MiB, stdout)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD.format(body=body), *argv],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{done.stderr}")
    line = next(x for x in done.stderr.splitlines() if x.startswith("BENCH "))
    _, seconds, cpu, peak = line.split()
    return float(seconds), float(cpu), float(peak), done.stdout


def bench_embeddings(args: argparse.Namespace, root: Path) -> None:
    model = root / "model"
    words = build_model(model, args.vocab, args.dim)
    data = root / "data.jsonl"
    write_data(data, words, args.n)
    spec = f"embedding_similarity:model={model}"
    rows: dict[str, list[tuple[float, float, float]]] = {"cold": [], "warm": [], "bare": []}
    scores = set()
    for attempt in range(args.repeat):
        cache = root / f"cache{attempt}"
        for label in ("cold", "warm"):
            seconds, cpu, peak, out = child(
                GOLDGATE, "score", str(data), "--metric", spec, "--json",
                "--cache-dir", str(cache), cwd=root,
            )  # fmt: skip
            rows[label].append((seconds, cpu, peak))
            scores.add(round(json.loads(out)["metrics"][spec]["score"], 6))
        seconds, cpu, peak, out = child(BARE, str(data), str(model), cwd=root)
        rows["bare"].append((seconds, cpu, peak))
        scores.add(round(json.loads(out), 6))
    print(
        f"(a) embedding_similarity, {args.n:,} examples x 2 references, model2vec"
        f" {args.vocab:,} words x {args.dim} dims, median of {args.repeat}"
    )
    labels = {
        "cold": "goldgate score, cold cache (embeds references)",
        "warm": "goldgate score, warm cache (embeds candidates only)",
        "bare": "bare model2vec encode + numpy (no goldgate)",
    }
    print(f"    {'':52} {'wall':>8} {'CPU':>8} {'ex/s (CPU)':>11} {'peak':>9}")
    for key, label in labels.items():
        seconds = statistics.median(s for s, _, _ in rows[key])
        cpu = statistics.median(c for _, c, _ in rows[key])
        peak = statistics.median(p for _, _, p in rows[key])
        print(f"    {label:52} {seconds:6.2f} s {cpu:6.2f} s {args.n / cpu:11,.0f} {peak:5.0f} MiB")
    agree = "agree" if len(scores) == 1 else f"DISAGREE {sorted(scores)}"
    print(f"    corpus scores {agree}: {sorted(scores)[0]:.4f}")


SERVER = """
import sys
from tests.metrics.fake_openai import fake_judge
with fake_judge() as server:
    print(server.url, flush=True)
    sys.stdin.read()
"""


def bench_judge(args: argparse.Namespace, root: Path) -> None:
    from goldgate.metrics.batch import MetricContext
    from goldgate.metrics.engine import score_corpus
    from goldgate.metrics.registry import create_metric

    n = args.calls
    candidates = [f"The answer is number {i}." for i in range(n)]
    references = [[f"Number {i}", f"It is {i}"] for i in range(n)]
    inputs = [f"Question {i}?" for i in range(n)]
    # The fake server runs in its own process: CPU time measured here is the client's alone.
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    assert server.stdout is not None and server.stdin is not None
    url = server.stdout.readline().strip()
    wall: dict[str, list[float]] = {"goldgate": [], "bare": [], "cached": []}
    cpu: dict[str, list[float]] = {"goldgate": [], "bare": [], "cached": []}

    def timed(label: str, work: Any) -> Any:
        start, start_cpu = time.perf_counter(), time.process_time()
        value = work()
        wall[label].append((time.perf_counter() - start) / n)
        cpu[label].append((time.process_time() - start_cpu) / n)
        return value

    try:
        # One judgment first, so that imports and the first connection are not timed.
        warm = create_metric("llm_judge", {"base_url": url, "model": "w", "rubric": "r"})
        score_corpus([("j", warm)], ["a"], [["b"]], inputs=["q"])
        for attempt in range(args.repeat):
            options = {
                "base_url": url,
                "model": "judge",
                "api_key_env": "KEY",
                "rubric": "Grade the answer from 1 to 5.",
                "concurrency": 1,
            }
            context = MetricContext(
                root=root, cache_dir=root / f"judge{attempt}", environ={"KEY": "sk-bench"}
            )
            for label in ("goldgate", "cached"):
                metric: Any = create_metric("llm_judge", options)
                metric.bind(context)
                timed(label, lambda m=metric: score_corpus(
                    [("j", m)], candidates, references, inputs=inputs
                ))  # fmt: skip
            data = json.dumps(metric.request(candidates[0], references[0], inputs[0], 0)).encode()

            def bare(data: bytes = data) -> None:
                for _ in range(n):
                    request = urllib.request.Request(
                        url + "/chat/completions",
                        data=data,
                        headers={"Content-Type": "application/json", "Authorization": "Bearer k"},
                    )
                    with urllib.request.urlopen(request, timeout=10) as response:
                        json.loads(response.read())

            timed("bare", bare)
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    w = {key: 1000 * statistics.median(values) for key, values in wall.items()}
    c = {key: 1000 * statistics.median(values) for key, values in cpu.items()}
    print(
        f"(b) llm_judge against the fake server (its own process) on 127.0.0.1, {n:,} calls"
        f" one at a time, median of {args.repeat}; ms per call, wall and client CPU"
    )
    print(
        f"    goldgate, fresh judgments          {w['goldgate']:7.3f} wall {c['goldgate']:7.3f} CPU"
    )
    print(f"    bare urllib POST, same request     {w['bare']:7.3f} wall {c['bare']:7.3f} CPU")
    print(
        f"    goldgate's own overhead            {w['goldgate'] - w['bare']:7.3f} wall"
        f" {c['goldgate'] - c['bare']:7.3f} CPU"
    )
    print(f"    goldgate, all from the cache       {w['cached']:7.3f} wall {c['cached']:7.3f} CPU")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--vocab", type=int, default=30_000)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--only", choices=["embed", "judge"])
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        root = Path(directory)
        if args.only != "judge":
            bench_embeddings(args, root)
        if args.only != "embed":
            bench_judge(args, root)


if __name__ == "__main__":
    main()
