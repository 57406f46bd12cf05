"""The corpus's cases: every metric, every system kind, samples, golden-set changes, drift,
``--jobs 2``, a compact baseline, the Dask local cluster, every exit code and every command.

Each case is small (a few dozen examples of the bundled example's golden sets) so that the
whole corpus runs in well under a minute of CPU; its systems are deterministic functions
written into the case's directory (``corpus_systems.py``), so what a case shows depends only
on goldgate.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

from tests.corpus.harness import REPO, Case, CorpusProject

CASES: dict[str, Case] = {}
#: a case that needs an optional package or file runs only where ``requires`` is met
REQUIRES: dict[str, Callable[[], str | None]] = {}


def case(name: str, requires: Callable[[], str | None] | None = None) -> Callable[[Case], Case]:
    def register(function: Case) -> Case:
        CASES[name] = function
        if requires is not None:
            REQUIRES[name] = requires
        return function

    return register


def _module(name: str) -> Callable[[], str | None]:
    return lambda: None if importlib.util.find_spec(name) else f"{name} is not installed"


def _wordnet() -> str | None:
    return None if Path("/usr/share/wordnet/data.noun").exists() else "WordNet is not installed"


SYSTEMS = '''
"""Deterministic systems for the corpus: the bundled example's, and worse ones."""

import asyncio
import zlib

from goldgate.examples import systems as example


def _every(text, k):
    return zlib.crc32(repr(text).encode()) % k == 0


def translate(text):
    return example.translate(text)


def translate_worse(text):
    out = example.translate(text)
    return " ".join(out.split()[:-2]) if _every(text, 2) else out


def summarize(text):
    return example.summarize(text)


def answer(record_input):
    return example.answer(record_input)


def answer_worse(record_input):
    return "" if _every(record_input, 3) else example.answer(record_input)


def answer_better(record_input):
    return example.answer(record_input) if not _every(record_input, 5) else "1923"


async def answer_async(record_input):
    await asyncio.sleep(0)
    return example.answer(record_input)


def broken(record_input):
    raise RuntimeError("the model's client failed")
'''

COMMAND = '''
"""A command system: JSON lines in, JSON lines out; a sample index changes the output."""

import json
import sys

from corpus_systems import translate

for line in sys.stdin:
    item = json.loads(line)
    out = translate(item["input"])
    reply = {"id": item["id"], "output": out}
    if "sample" in item:
        words = out.split()
        k = item["sample"]
        reply["sample"] = k
        reply["output"] = " ".join(words[: max(1, len(words) - k)])
    print(json.dumps(reply), flush=True)
'''

METRICS = '''
"""A user's metric: the share of reference words the candidate has, 0-100."""


def word_recall(candidate, references):
    ref = set(references[0].lower().split())
    return 100.0 * len(ref & set(candidate.lower().split())) / max(1, len(ref))


def length_penalty(candidate, references):
    return float(abs(len(candidate) - len(references[0])))


length_penalty.higher_is_better = False


def crashes(candidate, references):
    return 1.0 / (len(candidate) - len(candidate))


class Panic(BaseException):
    """What a native extension's panic looks like from Python (pyo3's PanicException)."""


def panics(candidate, references):
    raise Panic("called `Option::unwrap()` on a `None` value")
'''


def _setup(
    p: CorpusProject, config: str, suites: dict[str, int] | None = None, **extra: str
) -> None:
    """The systems, a configuration and the first rows of the bundled golden sets."""
    p.write("corpus_systems.py", SYSTEMS)
    p.write("corpus_metrics.py", METRICS)
    p.write("goldgate.yaml", textwrap.dedent(config).lstrip())
    for suite, count in (suites or {}).items():
        p.write_rows(f"goldens/{suite}.jsonl", p.example_rows(suite, count))
    for name, text in extra.items():
        p.write(name, text)


def _predictions(p: CorpusProject, suite: str, function: str, samples: int = 1) -> None:
    """Write ``out/<suite>.jsonl`` from a corpus system, as a user's pipeline would."""
    sys.path.insert(0, str(p.root))
    try:
        spec = importlib.util.spec_from_file_location(
            "corpus_systems", p.root / "corpus_systems.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(p.root))
    system = getattr(module, function)
    rows = []
    for record in p.rows(f"goldens/{suite}.jsonl"):
        out = system(record["input"])
        if samples == 1:
            rows.append({"id": record["id"], "output": out})
        else:
            words = out.split()
            outs = [" ".join(words[: max(1, len(words) - k)]) for k in range(samples)]
            rows.append({"id": record["id"], "outputs": outs})
    p.write_rows(f"out/{suite}.jsonl", rows)


QA_TRANSLATE = """
version: 1
suites:
  translate:
    goldens: goldens/translate.jsonl
    system: {{callable: "corpus_systems:{translate}"}}
    metrics: {{bleu: {{}}, chrf: {{}}}}
    gate:
      bleu: {{min: 20.0, max_drop: 1.0}}
      chrf: {{max_drop: 1.0}}
  qa:
    goldens: goldens/qa.jsonl
    system: {{callable: "corpus_systems:{answer}"}}
    metrics: {{exact_match: {{normalizer: squad}}, token_f1: {{normalizer: squad}}}}
    gate:
      exact_match: {{min: 40.0, max_drop: 2.0, max_flips: 2}}
      token_f1: {{max_drop: 2.0, slices: true}}
"""


@case("bundled_example")
def bundled_example(p: CorpusProject) -> None:
    """The repository's own example, as `./dev run` runs it: every suite passes."""
    shutil.copy(REPO / "goldgate.yaml", p.root)
    shutil.copytree(REPO / "goldens", p.root / "goldens")
    shutil.copy(REPO / "goldgate.baseline.json", p.root)
    p.goldgate("run", expect=0)
    p.capture("run")


@case("regression_bless_refused_then_forced")
def regression(p: CorpusProject) -> None:
    """A worse callable: run exits 1, bless refuses, --allow-regression records `forced`."""
    _setup(
        p, QA_TRANSLATE.format(translate="translate", answer="answer"), {"translate": 30, "qa": 40}
    )
    p.goldgate("bless", expect=0)
    p.capture("bless")
    p.write(
        "goldgate.yaml",
        textwrap.dedent(QA_TRANSLATE.format(translate="translate_worse", answer="answer_worse")),
    )
    p.goldgate("run", expect=1)
    p.capture("run")
    p.goldgate("bless", expect=1)
    p.goldgate("bless", "--allow-regression", expect=0)
    p.capture("forced")


@case("improved_predictions")
def improved(p: CorpusProject) -> None:
    """A predictions system that improves: exit 0, `improved`, a hint to bless."""
    _setup(
        p,
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          qa:
            goldens: goldens/qa.jsonl
            metrics: {exact_match: {normalizer: squad}, token_f1: {}}
            gate: {exact_match: {max_drop: 1.0}, token_f1: {max_drop_rel: 0.02}}
        """,
        {"qa": 50},
    )
    _predictions(p, "qa", "answer_worse")
    p.goldgate("bless", expect=0)
    _predictions(p, "qa", "answer")
    p.goldgate("run", expect=0)
    p.capture("run")
    p.goldgate("run", "--json", "--format", "md")
    p.capture("json")


@case("command_system_samples")
def command_samples(p: CorpusProject) -> None:
    """A command system asked three samples per input; cached outputs on the second run."""
    _setup(
        p,
        f"""
        version: 1
        system:
          command: {sys.executable} corpus_command.py
          samples: 3
          concurrency: 2
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics: {{bleu: {{}}, chrf: {{}}, exact_match: {{}}}}
            gate: {{bleu: {{max_drop: 1.0}}, exact_match: {{max_flips: 1}}}}
        """,
        {"translate": 25},
        **{"corpus_command.py": COMMAND},
    )
    p.goldgate("bless", expect=0)
    p.capture("bless")
    p.goldgate("run", expect=0)
    p.capture("run")
    p.goldgate("run", "--no-cache", "-q", expect=0)


@case("predictions_samples_regressed")
def predictions_samples(p: CorpusProject) -> None:
    """Predictions with `outputs` lists (samples: 3): the two-level bootstrap decides."""
    _setup(
        p,
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl", samples: 3}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics: {bleu: {}, chrf: {}, token_f1: {}, exact_match: {}}
            gate: {chrf: {max_drop: 0.5}, token_f1: {max_drop: 0.5}, exact_match: {max_flips: 0}}
        """,
        {"translate": 40},
    )
    _predictions(p, "translate", "translate", samples=3)
    p.goldgate("bless", expect=0)
    _predictions(p, "translate", "translate_worse", samples=3)
    p.goldgate("run")
    p.capture("run")


@case("async_callable_and_slices")
def async_callable(p: CorpusProject) -> None:
    """An async callable, tag slices and max_flips."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:answer_async", concurrency: 4}
        suites:
          qa:
            goldens: goldens/qa.jsonl
            metrics: {exact_match: {normalizer: squad}, token_f1: {normalizer: squad}}
            gate:
              exact_match: {min: 30.0, max_drop: 2.0, max_flips: 0}
              token_f1: {max_drop: 2.0, slices: true}
        """,
        {"qa": 66},
    )
    p.goldgate("bless", expect=0)
    p.write(
        "goldgate.yaml",
        (p.root / "goldgate.yaml").read_text().replace("answer_async", "answer_worse"),
    )
    p.goldgate("run")
    p.capture("run")


@case("translation_metrics")
def translation_metrics(p: CorpusProject) -> None:
    """BLEU's tokenizers and options, sentence BLEU, chrF, chrF++ and TER (lower is better)."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:translate"}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics:
              bleu: {tokenize: 13a}
              sentence_bleu: {}
              chrf: {}
              chrf++: {}
              ter: {}
            gate:
              bleu: {max_drop: 0.5}
              ter: {max_drop: 0.5, max: 80}
              chrf++: {max_drop_rel: 0.01}
          options:
            goldens: goldens/translate.jsonl
            metrics:
              bleu: {tokenize: intl, lowercase: true, smooth_method: floor}
              chrf: {char_order: 4, word_order: 1, lowercase: true}
              ter: {case_sensitive: true, normalized: true}
            gate: {ter: {max_drop: 1.0}}
          characters:
            goldens: goldens/translate.jsonl
            metrics: {bleu: {tokenize: char}}
        """,
        {"translate": 56},
    )
    p.goldgate("bless", expect=0)
    p.capture("bless")
    p.write(
        "goldgate.yaml",
        (p.root / "goldgate.yaml").read_text().replace(":translate", ":translate_worse"),
    )
    p.goldgate("run")
    p.capture("run")


@case("rouge_metrics")
def rouge_metrics(p: CorpusProject) -> None:
    """ROUGE-1/2/L/Lsum with and without the stemmer, ROUGE-W/S/SU, length ratio."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:summarize"}
        suites:
          summarize:
            goldens: goldens/summarize.jsonl
            metrics:
              rouge1: {}
              rouge2: {use_stemmer: true}
              rougeL: {use_stemmer: true}
              rougeLsum: {}
              rougeW: {}
              rougeS: {}
              rougeSU: {}
              length_ratio: {}
            gate:
              rougeL: {min: 30.0, max_drop: 1.0}
              length_ratio: {max: 150.0}
        """,
        {"summarize": 30},
    )
    p.goldgate("bless", expect=0)
    p.capture("bless")
    p.goldgate("run", expect=0)
    p.capture("run")


@case("meteor", requires=_wordnet)
def meteor(p: CorpusProject) -> None:
    """METEOR with WordNet (NLTK's numbers)."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:translate"}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics: {meteor: {}}
            gate: {meteor: {max_drop: 1.0}}
        """,
        {"translate": 20},
    )
    p.goldgate("bless", expect=0)
    p.capture("bless")


@case("custom_metrics")
def custom_metrics(p: CorpusProject) -> None:
    """`module:function` metrics from the project, one lower-is-better."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:translate"}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics:
              "corpus_metrics:word_recall": {}
              "corpus_metrics:length_penalty": {}
            gate:
              "corpus_metrics:word_recall": {max_drop: 1.0}
              "corpus_metrics:length_penalty": {max_drop: 1.0}
        """,
        {"translate": 30},
    )
    p.goldgate("bless", expect=0)
    p.write(
        "goldgate.yaml",
        (p.root / "goldgate.yaml").read_text().replace(":translate", ":translate_worse"),
    )
    p.goldgate("run")
    p.capture("run")


@case("embedding_similarity", requires=_module("model2vec"))
def embedding(p: CorpusProject) -> None:
    """embedding_similarity with a local model2vec folder."""
    from tests.metrics.test_embedding import build_model

    build_model(p.root / "models" / "tiny")
    goldens = [
        {"id": f"g{i:02d}", "input": f"what sat? {i}", "references": ["the cat sat on the mat"]}
        for i in range(16)
    ]
    _setup(
        p,
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          sem:
            goldens: goldens/sem.jsonl
            metrics: {embedding_similarity: {model: models/tiny}, token_f1: {}}
            gate: {embedding_similarity: {max_drop: 2.0}}
        """,
    )
    p.write_rows("goldens/sem.jsonl", goldens)
    outs = ["the cat sat on a mat", "a red car", "the dog sat", "cat mat"]
    p.write_rows(
        "out/sem.jsonl", [{"id": g["id"], "output": outs[i % 2]} for i, g in enumerate(goldens)]
    )
    p.goldgate("bless", expect=0)
    p.write_rows(
        "out/sem.jsonl", [{"id": g["id"], "output": outs[i % 4]} for i, g in enumerate(goldens)]
    )
    p.goldgate("run")
    p.capture("run")


@case("llm_judge")
def llm_judge(p: CorpusProject) -> None:
    """llm_judge against a local OpenAI-compatible server; the key is never shown."""
    from tests.metrics.fake_openai import Reply, Seen, fake_judge, valid

    def grade(seen: Seen) -> Reply:
        return valid(5, "right") if "Berlin" in seen.candidate else valid(2, "partly")

    with fake_judge(grade) as server:
        _setup(
            p,
            f"""
            version: 1
            system: {{callable: "corpus_systems:translate"}}
            suites:
              translate:
                goldens: goldens/translate.jsonl
                metrics:
                  llm_judge:
                    base_url: {server.url}
                    model: judge-1
                    api_key_env: CORPUS_JUDGE_KEY
                    rubric: "5 when the translation is faithful, 1 when it is not."
                    backoff_s: 0.001
                  chrf: {{}}
                gate: {{llm_judge: {{max_drop: 5.0}}}}
            """,
            {"translate": 12},
        )
        p.env["CORPUS_JUDGE_KEY"] = "sk-corpus-SECRET-0001"
        p.goldgate("bless", expect=0)
        p.capture("bless")
        p.goldgate("run", expect=0)
        p.capture("run")


def _golden_change(p: CorpusProject, extra: str = "") -> None:
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:answer"}
        suites:
          qa:
            goldens: goldens/qa.jsonl
            metrics: {exact_match: {normalizer: squad}, token_f1: {}}
            gate: {exact_match: {min: 30.0, max_drop: 3.0}}
        """
        + extra,
        {"qa": 30},
    )
    p.goldgate("bless", expect=0)
    rows = p.rows("goldens/qa.jsonl")
    del rows[3:6]  # removed
    rows[0]["references"] = ["an edited reference"]  # edited
    rows.extend(p.example_rows("qa")[40:44])  # added
    p.write_rows("goldens/qa.jsonl", rows)


@case("golden_change_compare")
def golden_change_compare(p: CorpusProject) -> None:
    """Examples added, edited and removed since the bless: compared on the shared ones."""
    _golden_change(p)
    p.goldgate("check")
    p.goldgate("run")
    p.capture("run")
    p.goldgate("bless", "--new-only")
    p.capture("new_only")


@case("golden_change_refused_and_max_removed")
def golden_change_refused(p: CorpusProject) -> None:
    """on_golden_change: refuse (exit 2), then max_removed: 2 exceeded (exit 1)."""
    _golden_change(p, "on_golden_change: refuse\n")
    p.goldgate("run", expect=2)
    p.capture("refused")
    text = (p.root / "goldgate.yaml").read_text()
    p.write("goldgate.yaml", text.replace("on_golden_change: refuse", "max_removed: 2"))
    p.goldgate("run")
    p.capture("max_removed")


@case("drift_from_anchor")
def drift(p: CorpusProject) -> None:
    """Blesses committed in git; max_drift measured from the best of the last blesses."""
    _setup(
        p,
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics: {chrf: {}}
            gate: {chrf: {max_drop: 5.0, max_drift: 1.0}}
        anchor: {best_of: 5}
        """,
        {"translate": 40},
    )
    p.git("init", "-q", "-b", "main")
    _predictions(p, "translate", "translate")
    p.goldgate("bless", expect=0)
    p.commit("bless 1", 0)
    _predictions(p, "translate", "translate_worse")
    p.goldgate("bless", "--allow-regression")
    p.commit("bless 2", 60)
    p.goldgate("run")
    p.capture("run")
    p.goldgate("history", "--json")


@case("jobs_2")
def jobs_2(p: CorpusProject) -> None:
    """Scoring in two processes gives the same numbers as one."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:summarize"}
        suites:
          summarize:
            goldens: goldens/summarize.jsonl
            metrics: {rougeL: {}, bleu: {}, chrf: {}}
            gate: {rougeL: {max_drop: 1.0}}
        """,
        {"summarize": 53},
    )
    p.goldgate("bless", "-j", "2", expect=0)
    p.capture("bless")
    p.goldgate("run", "-j", "2", expect=0)
    p.capture("run")


@case("compact_baseline")
def compact_baseline(p: CorpusProject) -> None:
    """5,000 examples: a packed baseline; check without reading records; a regression."""
    words = [f"w{k}" for k in range(12)]
    goldens = []
    for i in range(5000):
        ref = " ".join(words[(i + k) % len(words)] for k in range(1 + i % 7))
        goldens.append({"id": f"c{i:05d}", "input": f"q {i}", "references": [ref]})
    _setup(
        p,
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          big:
            goldens: goldens/big.jsonl
            metrics: {exact_match: {}, token_f1: {}, bleu: {}}
            gate: {exact_match: {max_drop: 0.5}, token_f1: {max_drop: 0.5}}
        report: {formats: [md, json, junit]}
        """,
    )
    p.write_rows("goldens/big.jsonl", goldens)

    def outputs(wrong_every: int) -> None:
        rows = []
        for i, g in enumerate(goldens):
            ref = g["references"][0]
            out = ref if i % wrong_every else " ".join(ref.split()[:-1]) or "none"
            rows.append({"id": g["id"], "output": out})
        p.write_rows("out/big.jsonl", rows)

    outputs(wrong_every=50)
    p.goldgate("bless", "-j", "1", expect=0)
    p.capture("bless")
    p.goldgate("check", expect=0)
    outputs(wrong_every=20)
    p.goldgate("run", "-j", "1", expect=1)
    p.capture("run")


@case("dask_local_cluster", requires=_module("distributed"))
def dask_local(p: CorpusProject) -> None:
    """Scoring and a callable system on a Dask LocalCluster."""
    _setup(
        p,
        QA_TRANSLATE.format(translate="translate", answer="answer"),
        {"translate": 20, "qa": 20},
    )
    p.goldgate("bless", "--dask", "local", "-q", expect=0)
    p.capture("bless")
    p.write(
        "goldgate.yaml",
        textwrap.dedent(QA_TRANSLATE.format(translate="translate_worse", answer="answer")),
    )
    p.goldgate("run", "--dask", "local", "-q", expect=1)
    p.capture("run")


@case("parquet_yaml_csv_goldens", requires=_module("pyarrow"))
def formats(p: CorpusProject) -> None:
    """Golden sets in Parquet, YAML and CSV."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    import yaml

    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:translate"}
        suites:
          pq:
            goldens: goldens/tr.parquet
            metrics: {bleu: {}}
          ym:
            goldens: goldens/tr.yaml
            metrics: {chrf: {}}
          cs:
            goldens: goldens/tr.csv
            metrics: {exact_match: {}}
        """,
    )
    rows = p.example_rows("translate", 15)
    table = pa.table(
        {
            "id": [r["id"] for r in rows],
            "input": [r["input"] for r in rows],
            "references": [r["references"] for r in rows],
        }
    )
    (p.root / "goldens").mkdir()
    pq.write_table(table, p.root / "goldens" / "tr.parquet")
    p.write(
        "goldens/tr.yaml",
        yaml.safe_dump(
            [{k: r[k] for k in ("id", "input", "references")} for r in rows], allow_unicode=True
        ),
    )
    csv = "id,input,reference\n" + "".join(
        f'{r["id"]},"{r["input"]}","{r["references"][0]}"\n' for r in rows
    )
    p.write("goldens/tr.csv", csv)
    p.goldgate("bless", expect=0)
    p.capture("bless")
    p.goldgate("check", expect=0)


@case("pyproject_config_no_baseline")
def pyproject_config(p: CorpusProject) -> None:
    """[tool.goldgate] in pyproject.toml; no baseline yet: min rules only, a hint to bless."""
    p.write("corpus_systems.py", SYSTEMS)
    p.write_rows("goldens/qa.jsonl", p.example_rows("qa", 25))
    p.write(
        "pyproject.toml",
        textwrap.dedent(
            """
            [project]
            name = "corpus"

            [tool.goldgate]
            version = 1
            system = {callable = "corpus_systems:answer"}

            [tool.goldgate.suites.qa]
            goldens = "goldens/qa.jsonl"
            metrics = {exact_match = {normalizer = "squad"}}
            gate = {exact_match = {min = 95.0}}
            """
        ).lstrip(),
    )
    p.goldgate("run", expect=1)
    p.capture("min_failed")
    p.write("pyproject.toml", (p.root / "pyproject.toml").read_text().replace("95.0", "10.0"))
    p.goldgate("run", expect=0)
    p.capture("no_baseline")


@case("significance_off")
def significance_off(p: CorpusProject) -> None:
    """Plain thresholds: any drop beyond max_drop fails."""
    _setup(
        p,
        QA_TRANSLATE.format(translate="translate", answer="answer") + "significance: off\n",
        {"translate": 20, "qa": 20},
    )
    p.goldgate("bless", expect=0)
    p.write(
        "goldgate.yaml",
        textwrap.dedent(
            QA_TRANSLATE.format(translate="translate_worse", answer="answer_better")
            + "significance: off\n"
        ),
    )
    p.goldgate("run", expect=1)
    p.capture("run")


@case("usage_errors")
def usage_errors(p: CorpusProject) -> None:
    """Exit 2, each naming the file, line, key or id."""
    config = """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          qa:
            goldens: goldens/qa.jsonl
            metrics: {exact_match: {}}
            gate: {exact_macth: {min: 10}}
        """
    _setup(p, config, {"qa": 10})
    p.goldgate("run", expect=2)  # a misspelt key
    p.write("goldgate.yaml", textwrap.dedent(config.replace("macth", "match")))
    p.goldgate("run", expect=2)  # no predictions file
    p.capture("no_predictions")
    _predictions(p, "qa", "answer")
    rows = p.rows("out/qa.jsonl")
    p.write_rows("out/qa.jsonl", rows[:-1])
    p.goldgate("run", expect=2)  # an id without output
    _predictions(p, "qa", "answer")
    p.goldgate("bless", expect=0)
    baseline = json.loads((p.root / "goldgate.baseline.json").read_text())
    baseline["suites"]["qa"]["metrics"]["exact_match"]["score"] += 1.0
    p.write("goldgate.baseline.json", json.dumps(baseline, indent=2))
    p.goldgate("run", expect=2)  # a damaged baseline
    p.capture("damaged_baseline")
    p.goldgate("check", expect=2)
    p.goldgate("run", "--suite", "nope", expect=2)
    p.goldgate("nonsense", expect=2)
    p.write("goldens/qa.jsonl", '{"id": "x", "input": "a"}\nnot json\n')
    p.goldgate("check", expect=2)


@case("internal_errors")
def internal_errors(p: CorpusProject) -> None:
    """A metric that raises and a system that raises: never exit 1, never a traceback."""
    _setup(
        p,
        """
        version: 1
        system: {callable: "corpus_systems:translate"}
        suites:
          translate:
            goldens: goldens/translate.jsonl
            metrics: {"corpus_metrics:crashes": {}}
        """,
        {"translate": 5},
    )
    p.goldgate("run")
    p.capture("metric_raised")
    text = (p.root / "goldgate.yaml").read_text()
    p.write("goldgate.yaml", text.replace(":crashes", ":panics"))
    p.goldgate("run")
    p.capture("metric_panicked")
    p.write(
        "goldgate.yaml",
        text.replace('"corpus_metrics:crashes": {}', "bleu: {}").replace(":translate", ":broken"),
    )
    p.goldgate("run", "--no-cache")
    p.capture("system_raised")


@case("other_commands")
def other_commands(p: CorpusProject) -> None:
    """score, compare, report, check, schema, history and init."""
    _setup(
        p, QA_TRANSLATE.format(translate="translate", answer="answer"), {"translate": 15, "qa": 15}
    )
    p.goldgate("bless", "-q", expect=0)
    p.goldgate("run", "-q", "--report-dir", "first", expect=0)
    p.write(
        "goldgate.yaml",
        textwrap.dedent(QA_TRANSLATE.format(translate="translate_worse", answer="answer_worse")),
    )
    p.goldgate("run", "-q", "--report-dir", "second")
    p.goldgate("compare", "first/result.json", "second/result.json")
    p.goldgate("compare", "goldgate.baseline.json", "second/result.json", "--json")
    p.goldgate(
        "report",
        "second/result.json",
        "--format",
        "md",
        "--format",
        "junit",
        "-o",
        "goldgate-report",
    )
    p.capture("report")
    p.goldgate("check", expect=0)
    p.goldgate("history")
    p.goldgate("history", "--json")
    rows = [
        {"candidate": "The train leaves at eight.", "references": ["The train leaves at 8."]},
        {"candidate": "Where is the station?", "references": ["Where is the station?"]},
    ]
    p.write_rows("data.jsonl", rows)
    p.goldgate(
        "score", "data.jsonl", "--metric", "bleu", "--metric", "chrf", "--metric", "ter", "--json"
    )
    p.goldgate("score", "data.jsonl", "--metric", "rougeL:use_stemmer=true", "--per-example")
    p.goldgate("schema", "baseline")
    (p.root / "fresh").mkdir()
    p.root, fresh = p.root / "fresh", p.root
    try:
        p.goldgate("init", expect=0)
        p.goldgate("run", expect=0)
        p.capture("init_run")
    finally:
        p.root = fresh
