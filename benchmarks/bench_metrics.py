"""Time ``goldgate score`` against the reference implementations, process against process.

Each side is a fresh Python process (interpreter start and imports included) reading the same
JSONL file; the wall time of each is the median of ``--repeat`` runs, interleaved so that drift
hits both sides alike, and its peak memory is the child's ``ru_maxrss`` read with ``os.wait4``.
The peers are small scripts in ``benchmarks/peers/`` (sacrebleu, rouge-score, the SQuAD v1.1
script); they are test-time dependencies only and goldgate never imports them.

Groups, with the floor each ratio must reach:

  (a) BLEU + chrF on WMT21 de-en (1,000 × 2 refs)           vs sacrebleu             ≥ 5×
  (g) BLEU alone, (h) chrF alone, same corpus               vs sacrebleu             ≥ 5×
  (b) ROUGE-1/2/L/Lsum, stemming, SummEval (1,600 × 11)     vs rouge-score           ≥ 10×
  (c) exact match + token F1 on SQuAD v1.1 dev (BERT)       vs the SQuAD script      ≥ 2×
  (d) all of the above metrics over all three corpora in ONE goldgate call
      vs every peer run one after another on the same file                           ≥ 5×
  (e) TER on WMT21 de-en (1,000 × 2 refs)                   vs sacrebleu             ≥ 5×
  (f) METEOR on WMT21 de-en (1,000 × 2 refs)                vs NLTK (as evaluate)    ≥ 3×

METEOR needs WordNet for both sides: NLTK reads ``$NLTK_DATA`` (default here: the
``.ci/nltk_data`` that ``./dev test`` builds), goldgate the same files via ``GOLDGATE_WORDNET``.

and, for each group, goldgate's peak memory must not exceed the peers' (for (d), the largest
of the peers). The data comes from ``--data`` (default ``../shared/data`` beside the
repository); without it, or with ``--quick``, a generated corpus of the same shape is used.

    python benchmarks/bench_metrics.py                # real data, median of 3
    python benchmarks/bench_metrics.py --quick        # a tiny generated corpus, one run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
PEERS = HERE / "peers"
DEFAULT_DATA = HERE.parent / ".." / "shared" / "data"

MT_FILE = "mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl"
SUMM_FILE = "summ_summeval_cnndm.jsonl"
QA_FILE = "qa_squad_v1.1_dev.bert-ensemble.jsonl"

ROUGE_TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]
# goldgate spec -> (peer script, the key of the peer's JSON output holding the same number)
MT_SPECS = {"bleu": ("sacrebleu_peer", "bleu"), "chrf": ("sacrebleu_peer", "chrf")}
BLEU_SPECS = {"bleu": ("sacrebleu_peer", "bleu")}
CHRF_SPECS = {"chrf": ("sacrebleu_peer", "chrf")}
ROUGE_SPECS = {f"{name}:use_stemmer=true": ("rouge_score_peer", name) for name in ROUGE_TYPES}
QA_SPECS = {"exact_match": ("squad_peer", "exact_match"), "token_f1": ("squad_peer", "f1")}
TER_SPECS = {"ter": ("ter_peer", "ter")}
METEOR_SPECS = {"meteor": ("meteor_peer", "meteor")}
NLTK_DATA = HERE.parent / ".ci" / "nltk_data"


@dataclass
class Group:
    label: str
    title: str
    corpus: Path
    specs: dict[str, tuple[str, str]]
    floor: float
    peers: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.peers = list(dict.fromkeys(peer for peer, _ in self.specs.values()))


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    max_rss_mb: float
    output: str


def run_process(argv: list[str]) -> Run:
    """Run one command to completion; wall time, peak RSS of the child, and its stdout.

    Linux carries the parent's high-water RSS into a child's ``ru_maxrss`` at fork and exec,
    so this script streams its files and stays small; ``main`` prints its own peak, below
    which a child's figure would mean nothing.
    """
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - start
        process.returncode = os.waitstatus_to_exitcode(status)
        stderr = process.stderr.read().decode() if process.stderr else ""
        if process.returncode != 0:
            raise SystemExit(f"command failed ({process.returncode}): {' '.join(argv)}\n{stderr}")
        out.seek(0)
        # ru_maxrss is in kilobytes on Linux.
        cpu = usage.ru_utime + usage.ru_stime
        return Run(seconds, cpu, usage.ru_maxrss / 1024, out.read().decode())


def goldgate_command(corpus: Path, specs: list[str]) -> list[str]:
    script = Path(sys.executable).parent / "goldgate"
    head = [str(script)] if script.exists() else [sys.executable, "-m", "goldgate.cli.main"]
    return [*head, "score", str(corpus), *(f"--metric={spec}" for spec in specs), "--json"]


def peer_command(peer: str, corpus: Path, keys: list[str]) -> list[str]:
    """The peer's command; sacrebleu's computes only the metrics the group compares."""
    extra = keys if peer == "sacrebleu_peer" else []
    return [sys.executable, str(PEERS / f"{peer}.py"), str(corpus), *extra]


# --- corpora ----------------------------------------------------------------------------------
def _write_jsonl(path: Path, rows: Iterable[dict[str, object]]) -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
    return path


def _sentence(rng: random.Random, vocabulary: list[str], low: int, high: int) -> str:
    return " ".join(rng.choice(vocabulary) for _ in range(rng.randint(low, high)))


def _noisy_copy(rng: random.Random, text: str, vocabulary: list[str], rate: float) -> str:
    words = [rng.choice(vocabulary) if rng.random() < rate else w for w in text.split()]
    return " ".join(words)


def generate_corpora(directory: Path, *, quick: bool) -> dict[str, Path]:
    """Corpora shaped like the real ones (sizes, reference counts, lengths), seeded."""
    rng = random.Random(0)
    stems = ["run", "walk", "talk", "read", "play", "work", "call", "open", "help", "look"]
    words = [f"{stem}{suffix}" for stem in stems for suffix in ("", "s", "ing", "ed")]
    words += ["the", "a", "an", "of", "to", "in", "and", "city", "river", "year", "people"]
    words += [",", ".", "'s", "government", "report", "said", "new", "first", "1990", "$5"]
    sizes = {"mt": 40, "summ": 30, "qa": 200} if quick else {"mt": 1000, "summ": 1600, "qa": 10570}

    def mt_row() -> dict[str, object]:
        source = _sentence(rng, words, 10, 40)
        refs = [_noisy_copy(rng, source, words, 0.2) for _ in range(2)]
        return {"candidate": _noisy_copy(rng, source, words, 0.3), "references": refs}

    def summ_row() -> dict[str, object]:
        source = _sentence(rng, words, 40, 80)
        refs = [_noisy_copy(rng, source, words, 0.4) for _ in range(11)]
        return {"candidate": _noisy_copy(rng, source, words, 0.5), "references": refs}

    def qa_row() -> dict[str, object]:
        answer = _sentence(rng, words, 1, 4)
        refs = [_noisy_copy(rng, answer, words, 0.3) for _ in range(rng.randint(1, 5))]
        return {"candidate": _noisy_copy(rng, answer, words, 0.3), "references": refs}

    makers = {"mt": mt_row, "summ": summ_row, "qa": qa_row}
    return {
        name: _write_jsonl(directory / f"{name}.jsonl", (make() for _ in range(sizes[name])))
        for name, make in makers.items()
    }


def real_corpora(data: Path) -> dict[str, Path] | None:
    paths = {"mt": data / MT_FILE, "summ": data / SUMM_FILE, "qa": data / QA_FILE}
    return paths if all(path.exists() for path in paths.values()) else None


def _stream(path: Path) -> Iterator[str]:
    with path.open(encoding="utf-8") as handle:
        yield from handle


def combine(corpora: dict[str, Path], directory: Path) -> Path:
    """One file holding every corpus, for the all-in-one group (d)."""
    target = directory / "all.jsonl"
    with target.open("w", encoding="utf-8") as out:
        for path in corpora.values():
            for line in _stream(path):
                if line.strip():
                    row = json.loads(line)
                    record = {"candidate": row["candidate"], "references": row["references"]}
                    out.write(json.dumps(record, ensure_ascii=False) + "\n")
    return target


# --- measuring --------------------------------------------------------------------------------
@dataclass
class Measured:
    group: Group
    goldgate: list[Run]
    peers: dict[str, list[Run]]

    @property
    def goldgate_seconds(self) -> float:
        return statistics.median(run.seconds for run in self.goldgate)

    @property
    def peer_seconds(self) -> float:
        # Peers run one after another: their times add up, repeat by repeat.
        repeats = len(self.goldgate)
        totals = [sum(runs[i].seconds for runs in self.peers.values()) for i in range(repeats)]
        return statistics.median(totals)

    @property
    def goldgate_mb(self) -> float:
        return max(run.max_rss_mb for run in self.goldgate)

    @property
    def peer_mb(self) -> float:
        return max(run.max_rss_mb for runs in self.peers.values() for run in runs)

    @property
    def ratio(self) -> float:
        return self.peer_seconds / self.goldgate_seconds

    @property
    def cpu_ratio(self) -> float:
        """The same ratio in CPU time (user + system), steadier on a loaded machine."""
        ours = statistics.median(run.cpu_seconds for run in self.goldgate)
        repeats = len(self.goldgate)
        theirs = [sum(runs[i].cpu_seconds for runs in self.peers.values()) for i in range(repeats)]
        return statistics.median(theirs) / ours

    def max_difference(self) -> float:
        """The largest |goldgate − peer| over the group's scores (both on 0–100)."""
        ours = json.loads(self.goldgate[-1].output)["metrics"]
        theirs = {peer: json.loads(runs[-1].output) for peer, runs in self.peers.items()}
        return max(
            abs(ours[spec]["score"] - theirs[peer][key])
            for spec, (peer, key) in self.group.specs.items()
        )


def measure(group: Group, repeat: int) -> Measured:
    measured = Measured(group, [], {peer: [] for peer in group.peers})
    ours = goldgate_command(group.corpus, list(group.specs))
    theirs = {
        peer: peer_command(peer, group.corpus, [k for p, k in group.specs.values() if p == peer])
        for peer in group.peers
    }
    # One untimed run each: files in the page cache and bytecode written for both sides.
    run_process(ours)
    for command in theirs.values():
        run_process(command)
    for _ in range(repeat):
        measured.goldgate.append(run_process(ours))
        for peer in group.peers:
            measured.peers[peer].append(run_process(theirs[peer]))
    return measured


def verdict(ok: bool) -> str:
    return "PASS" if ok else "FAIL"


# Parity is within 1e-9 points; a benchmark of numbers that disagree measures nothing.
AGREEMENT = 1e-9


def report(results: list[Measured], *, check_floors: bool) -> bool:
    """Print the table; False when scores disagree or (with ``check_floors``) a floor fails."""
    header = (
        f"{'group':<44} {'goldgate':>9} {'peers':>9} {'ratio':>7} {'floor':>6}      "
        f"{'peak MB goldgate/peers':>22}       {'max |Δ|':>8}  {'cpu ratio':>9}"
    )
    print(header)
    print("-" * len(header))
    ok = True
    for result in results:
        group = result.group
        fast = result.ratio >= group.floor
        lean = result.goldgate_mb <= result.peer_mb
        difference = result.max_difference()
        agree = difference <= AGREEMENT
        ok &= agree and (not check_floors or (fast and lean))
        time_check = verdict(fast) if check_floors else "-   "
        memory_check = verdict(lean) if check_floors else "-   "
        print(
            f"({group.label}) {group.title:<40} {result.goldgate_seconds:>8.2f}s "
            f"{result.peer_seconds:>8.2f}s {result.ratio:>6.1f}× {group.floor:>5.1f}× {time_check} "
            f"{result.goldgate_mb:>10.1f} / {result.peer_mb:<9.1f} {memory_check} "
            f"{difference:>10.1e} {result.cpu_ratio:>9.1f}×{'' if agree else ' DISAGREE'}"
        )
        for peer, runs in result.peers.items():
            seconds = statistics.median(run.seconds for run in runs)
            mb = max(run.max_rss_mb for run in runs)
            print(f"      {peer:<38} {'':>9} {seconds:>8.2f}s {'':>22} {mb:>10.1f}")
    return ok


def build_groups(corpora: dict[str, Path], directory: Path, labels: str, real: bool) -> list[Group]:
    """The groups asked for, over real or generated corpora."""
    names = (
        {"mt": "WMT21 de-en", "summ": "SummEval", "qa": "SQuAD dev (BERT)"}
        if real
        else {"mt": "gen. MT", "summ": "gen. summaries", "qa": "gen. QA"}
    )
    makers = {
        "a": lambda: Group("a", f"BLEU + chrF, {names['mt']}", corpora["mt"], MT_SPECS, 5.0),
        "g": lambda: Group("g", f"BLEU, {names['mt']}", corpora["mt"], BLEU_SPECS, 5.0),
        "h": lambda: Group("h", f"chrF, {names['mt']}", corpora["mt"], CHRF_SPECS, 5.0),
        "b": lambda: Group(
            "b", f"ROUGE-1/2/L/Lsum+stem, {names['summ']}", corpora["summ"], ROUGE_SPECS, 10.0
        ),
        "c": lambda: Group("c", f"EM + token F1, {names['qa']}", corpora["qa"], QA_SPECS, 2.0),
        "d": lambda: Group(
            "d",
            "all 8 metrics, one call, all 3 corpora",
            combine(corpora, directory),
            {**MT_SPECS, **ROUGE_SPECS, **QA_SPECS},
            5.0,
        ),
        "e": lambda: Group("e", f"TER, {names['mt']}", corpora["mt"], TER_SPECS, 5.0),
        "f": lambda: Group("f", f"METEOR, {names['mt']}", corpora["mt"], METEOR_SPECS, 3.0),
    }
    return [makers[label]() for label in labels if label in makers]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--repeat", type=int, default=3, help="runs per command (median)")
    parser.add_argument("--quick", action="store_true", help="tiny generated corpus, one run")
    parser.add_argument("--groups", default="aghbcdef", help="which groups to run, e.g. agh")
    args = parser.parse_args(argv)
    # An installed package has its bytecode compiled; both sides may write theirs (in the
    # untimed first run), or goldgate alone would be timed compiling its sources every run.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    # Both sides of METEOR read the same WordNet files.
    os.environ.setdefault("NLTK_DATA", str(NLTK_DATA))
    wordnet = Path(os.environ["NLTK_DATA"].split(os.pathsep)[0]) / "corpora" / "wordnet"
    os.environ.setdefault("GOLDGATE_WORDNET", str(wordnet))
    if "f" in args.groups and not (wordnet / "data.noun").is_file():
        print(f"no WordNet for NLTK in {wordnet}: group (f) skipped (./dev test builds it)")
        args.groups = args.groups.replace("f", "")
    repeat = 1 if args.quick else max(1, args.repeat)

    with tempfile.TemporaryDirectory(prefix="goldgate-bench-") as tmp:
        directory = Path(tmp)
        corpora = None if args.quick else real_corpora(args.data)
        real = corpora is not None
        source = f"real data in {args.data.resolve()}"
        if corpora is None:
            corpora = generate_corpora(directory, quick=args.quick)
            source = "a generated corpus" + (" (--quick: timings mean nothing)" * args.quick)
        print(f"goldgate benchmark on {source}; median of {repeat} run(s) per command")
        load = ", ".join(f"{value:.1f}" for value in os.getloadavg())
        print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load}\n")
        groups = build_groups(corpora, directory, args.groups, real)
        results = [measure(group, repeat) for group in groups]
        ok = report(results, check_floors=not args.quick)
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\nthis script's own peak: {own:.1f} MB (a child's peak cannot read lower)")
    if args.quick:
        print("\n--quick: scores compared, floors not checked")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
