"""The diagnosis detectors: accuracy on the labelled set, firing rate on real unchanged
outputs, and throughput.

(a) per mode, precision and recall on the labelled set (``tests/diagnosis/labelled``, built in
memory: synthetic regressions of goldgate's own French, Spanish, Russian and Japanese sentences
and, where the shared data is, of real English, German and Chinese outputs, with unchanged
controls), overall and per language; (b) on the real systems of the shared data
(WMT21, SummEval, SQuAD, XSum) with their references, current = blessed = the system's
outputs, how often each detector fires (``surface_only``, ``refusal`` and ``format_break``
should be near zero); (c) examples per second of each detector and of all together over those
outputs (CPU time in this process); (d) both sides of a suite with a tenth of its outputs
changed, by ``detect_side`` twice and by ``detect_sides``; (e) with ``--scale N``, both sides of
N ``bench_scale`` QA records and the memory ``detect_sides`` holds. Exit 1 when a mode falls
below the floors the tests hold.

    python benchmarks/bench_diagnosis_accuracy.py
    python benchmarks/bench_diagnosis_accuracy.py --quick     # no real data, a smaller timing
    python benchmarks/bench_diagnosis_accuracy.py --no-shared # as on a clone: own sentences
    python benchmarks/bench_diagnosis_accuracy.py --scale 1000000   # (e) as a run would
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import tempfile
import time
import tracemalloc
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.diagnosis import labelled  # noqa: E402
from tests.diagnosis.labelled import load, own, score, score_by_language  # noqa: E402
from tests.diagnosis.test_accuracy import PRECISION, RECALL  # noqa: E402
from tests.shared_data import DATA  # noqa: E402

from goldgate.diagnosis.detect import detect_side, detect_sides, side_context  # noqa: E402
from goldgate.diagnosis.detector import Detector, Example  # noqa: E402
from goldgate.diagnosis.detectors import language_switch  # noqa: E402
from goldgate.diagnosis.registry import detectors  # noqa: E402

REAL = [
    "mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl",
    "mt_wmt21_newstest2021_de-en.Online-B.jsonl",
    "mt_wmt21_newstest2021_de-en.UEdin.jsonl",
    "mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl",
    "mt_wmt21_newstest2021_en-zh.Online-B.jsonl",
    "summ_summeval_cnndm.jsonl",
    "summ_xsum_maynez2020.jsonl",
    "qa_squad_v1.1_dev.bert-ensemble.jsonl",
]


def _examples(name: str) -> list[Example]:
    with (DATA / name).open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    return [
        Example(row["candidate"], row["input"] or None, tuple(row["references"]), row["candidate"])
        for row in rows
    ]


def accuracy(with_shared: bool) -> bool:
    rows = load() if with_shared else own()
    scores = score(rows)
    languages = Counter(str(row["lang"]) for row in rows)
    parts = (
        "own sentences and shared data"
        if with_shared and labelled.shared_available()
        else ("own sentences only (no shared data)")
    )
    print(f"(a) labelled set, {parts}: {len(rows)} rows, {len(languages)} languages")
    print("  rows per language: " + ", ".join(f"{k} {v}" for k, v in sorted(languages.items())))
    print("  precision / recall per mode")
    print(f"  {'mode':<16} {'positives':>9} {'precision':>9} {'recall':>7}")
    good = True
    for name, result in scores.items():
        ok = result.precision >= PRECISION and result.recall >= RECALL
        good &= ok
        flag = "" if ok else "  BELOW FLOOR"
        print(
            f"  {name:<16} {result.positives:>9} {result.precision:>9.3f} "
            f"{result.recall:>7.3f}{flag}"
        )
    by_language = score_by_language(rows)
    names = list(scores)
    print("  per language: positives precision/recall (- where a mode has no row there)")
    print("  " + f"{'mode':<16}" + "".join(f"{lang:>15}" for lang in by_language))
    for name in names:
        cells = []
        for lang_scores in by_language.values():
            result = lang_scores[name]
            if result.positives or result.false:
                cells.append(f"{result.positives:>3} {result.precision:.2f}/{result.recall:.2f}")
            else:
                cells.append("-")
        print("  " + f"{name:<16}" + "".join(f"{cell:>15}" for cell in cells))
    return good


def firing(sets: dict[str, list[Example]]) -> None:
    chosen = detectors()
    print("(b) real unchanged outputs: share of outputs each detector flags")
    print("  " + " ".join(f"{d.name[:9]:>9}" for d in chosen) + "  data set")
    for name, examples in sets.items():
        findings = detect_side(examples, chosen)
        shares = [
            sum(detector.name in names for names in findings.names) / len(examples)
            for detector in chosen
        ]
        print("  " + " ".join(f"{share:>9.2%}" for share in shares) + f"  {name}")


def _forget() -> None:
    """Empty language_switch's memory of references, so that every timing starts cold."""
    language_switch._reference_scripts.clear()
    language_switch._reference_languages.clear()


def throughput(examples: list[Example]) -> None:
    chosen = detectors()
    context = side_context([example.output for example in examples])
    print(f"(c) throughput over {len(examples):,} outputs (CPU, one process)")
    for detector in chosen:
        _forget()
        start = time.process_time()
        for example in examples:
            detector(example, context)
        seconds = max(time.process_time() - start, 1e-9)
        per = seconds / len(examples) * 1e6
        print(f"  {detector.name:<16} {len(examples) / seconds:>12,.0f} /s {per:6.2f} µs")
    _forget()
    start = time.process_time()
    detect_side(examples, chosen)
    seconds = max(time.process_time() - start, 1e-9)
    per = seconds / len(examples) * 1e6
    print(f"  {'all (detect_side)':<16} {len(examples) / seconds:>11,.0f} /s {per:6.2f} µs")


def _time_sides(
    current: list[Example], blessed: list[Example], chosen: Sequence[Detector]
) -> tuple[float, float]:
    """CPU seconds of ``detect_side`` on each side, and of ``detect_sides`` on both."""
    _forget()
    start = time.process_time()
    detect_side(current, chosen)
    detect_side(blessed, chosen)
    apart = time.process_time() - start
    _forget()
    start = time.process_time()
    detect_sides(current, blessed, chosen)
    return apart, time.process_time() - start


def both_sides(examples: list[Example], changed: float = 0.1) -> None:
    """A run's diagnosis: both sides of a suite whose current outputs differ from the blessed
    ones on ``changed`` of the examples (every tenth, the other system's output)."""
    chosen = detectors()
    blessed = [Example(e.output, e.source, e.references, None) for e in examples]
    step = round(1 / changed)
    current = [
        Example(other.output if i % step == 0 else e.output, e.source, e.references, e.output)
        for i, (e, other) in enumerate(zip(examples, examples[1:] + examples[:1], strict=True))
    ]
    apart, together = _time_sides(current, blessed, chosen)
    print(f"(d) both sides, {changed:.0%} of outputs changed, {len(examples):,} examples")
    print(f"  detect_side twice  {apart / len(examples) * 1e6:6.2f} µs an example")
    print(f"  detect_sides       {together / len(examples) * 1e6:6.2f} µs an example")


def at_scale(size: int) -> None:
    """Both sides of ``bench_scale``'s QA records (current = blessed: a run that changed
    nothing), by ``detect_side`` twice and by ``detect_sides``, with the memory it holds."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_scale import generate

    with tempfile.TemporaryDirectory(prefix="goldgate-diagnosis-") as tmp:
        directory = Path(tmp)
        generate(directory, size, "json", 1000)
        with (directory / "goldens.jsonl").open() as handle:
            goldens = [json.loads(line) for line in handle]
        with (directory / "predictions.jsonl").open() as handle:
            outputs = {row["id"]: row["output"] for row in map(json.loads, handle)}
    blessed = [
        Example(outputs[row["id"]], row.get("input"), tuple(row["references"]), None)
        for row in goldens
    ]
    current = [Example(e.output, e.source, e.references, e.output) for e in blessed]
    del goldens, outputs
    chosen = detectors()
    apart, together = _time_sides(current, blessed, chosen)
    _forget()
    gc.collect()
    tracemalloc.start()  # a second pass, for memory alone: tracing slows it several times
    kept = detect_sides(current, blessed, chosen)
    held, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del kept
    print(f"(e) both sides of {size:,} bench_scale QA records, nothing changed")
    print(f"  detect_side twice  {apart:6.2f} s ({apart / size * 1e6:5.2f} µs an example)")
    print(f"  detect_sides       {together:6.2f} s ({together / size * 1e6:5.2f} µs an example)")
    print(f"  detect_sides holds {held / 2**20:.1f} MiB, peaks at {peak / 2**20:.1f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="labelled set only, no real data")
    parser.add_argument(
        "--no-shared",
        action="store_true",
        help="leave the shared data out, as on a user's clone (own sentences only)",
    )
    parser.add_argument(
        "--scale", type=int, default=0, help="also time both sides of this many QA records"
    )
    args = parser.parse_args(argv)
    with_shared = not args.no_shared
    good = accuracy(with_shared)
    if args.quick or not with_shared or not DATA.is_dir():
        rows = load() if with_shared else own()
        examples = [
            Example(str(r["output"]), r["source"], tuple(r["references"]), r["blessed"])  # type: ignore[arg-type]
            for r in rows
        ]
        why = "--quick" if args.quick else "--no-shared" if args.no_shared else f"no {DATA}"
        print(f"(b) skipped: {why}")
        throughput(examples)
        both_sides(examples)
    else:
        sets = {name.removesuffix(".jsonl"): _examples(name) for name in REAL}
        firing(sets)
        throughput([example for examples in sets.values() for example in examples])
        both_sides(sets["qa_squad_v1.1_dev.bert-ensemble"])
        both_sides(sets["mt_wmt21_newstest2021_de-en.UEdin"])
    if args.scale:
        at_scale(args.scale)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
