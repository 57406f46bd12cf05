"""goldgate's METEOR against NLTK's ``meteor_score``: its doctests, generated text, real data.

NLTK reads WordNet 3.0 from ``.ci/nltk_data`` (``./dev test`` builds it from Debian's
``wordnet-base``, see tools/wordnet_for_nltk.py); goldgate reads the same files itself.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.errors import MetricError
from goldgate.metrics.engine import MetricResult, score_corpus
from goldgate.metrics.meteor import wordnet as wordnet_module
from goldgate.metrics.meteor.nltk_tokenize import nltk_word_tokenize
from goldgate.metrics.registry import create_metric, metric_from_spec
from tests.shared_data import DATA
from tests.strategies import any_text, tokenizer_soup

ROOT = Path(__file__).resolve().parents[2]
NLTK_DATA = Path(os.environ.get("GOLDGATE_TEST_NLTK_DATA", ROOT / ".ci" / "nltk_data"))
WORDNET_DIR = NLTK_DATA / "corpora" / "wordnet"
TOLERANCE = 1e-9
LARGE = [HealthCheck.large_base_example, HealthCheck.data_too_large, HealthCheck.too_slow]
Corpus = list[tuple[str, list[str]]]

if not (WORDNET_DIR / "data.noun").is_file():
    pytest.skip(
        f"no WordNet for NLTK in {WORDNET_DIR} (./dev test builds it from wordnet-base)",
        allow_module_level=True,
    )
nltk = pytest.importorskip("nltk")
nltk.data.path.insert(0, str(NLTK_DATA))
from nltk.tokenize import word_tokenize  # noqa: E402
from nltk.translate.meteor_score import meteor_score, single_meteor_score  # noqa: E402

WORDNET = str(WORDNET_DIR)


def run(options: dict[str, Any], examples: Corpus) -> MetricResult:
    metric = create_metric("meteor", {"wordnet": WORDNET, **options})
    return score_corpus(
        [("meteor", metric)], [c for c, _ in examples], [refs for _, refs in examples]
    )[0]


def nltk_tokens(text: str, tokenize: str) -> list[str]:
    return word_tokenize(text, preserve_line=True) if tokenize == "nltk" else text.split()


def assert_equal_to_nltk(options: dict[str, Any], examples: Corpus) -> None:
    """Every example's score and the corpus mean equal NLTK's (× 100) to 1e-9."""
    result = run(options, examples)
    tokenize = options.get("tokenize", "nltk")
    params = {key: options[key] for key in ("alpha", "beta", "gamma") if key in options}
    expected = [
        100
        * meteor_score(
            [nltk_tokens(ref, tokenize) for ref in refs], nltk_tokens(candidate, tokenize), **params
        )
        for candidate, refs in examples
    ]
    assert result.per_example() == pytest.approx(expected, abs=TOLERANCE, rel=0)
    mean = sum(expected) / len(expected)
    assert abs(result.corpus_score().score - mean) <= TOLERANCE


# -- NLTK's own examples (meteor.doctest and the meteor_score docstrings) -------------------

DOCTESTS = [
    ("John loves Mary", "The candidate has no alignment to any of the references", 0.0),
    ("on the mat sat the cat", "The cat sat on the mat", 0.5),
    ("The cat was sat on the mat", "The cat sat on the mat", 0.9654),
    ("creates or updates a virtual machine scale set", "create or update a vm set", 0.7806),
]
HYPOTHESIS1 = (
    "It is a guide to action which ensures that the military always obeys the commands of the party"
)
REFERENCES = [
    "It is a guide to action that ensures that the military will forever heed Party commands",
    "It is the guiding principle which guarantees the military forces always being under the "
    "command of the Party",
    "It is the practical guide for the army always to heed the directions of the party",
]


@pytest.mark.parametrize(("candidate", "reference", "expected"), DOCTESTS)
def test_nltk_doctest_values(candidate: str, reference: str, expected: float) -> None:
    result = run({}, [(candidate, [reference])])
    assert round(result.corpus_score().score / 100, 4) == expected
    assert_equal_to_nltk({}, [(candidate, [reference])])


def test_nltk_docstring_values_and_the_best_reference() -> None:
    single = run({"tokenize": "whitespace"}, [(HYPOTHESIS1, REFERENCES[:1])])
    assert round(single.corpus_score().score / 100, 4) == 0.6944
    assert single.per_example()[0] == pytest.approx(
        100 * single_meteor_score(REFERENCES[0].split(), HYPOTHESIS1.split()), abs=TOLERANCE
    )
    best = run({"tokenize": "whitespace"}, [(HYPOTHESIS1, REFERENCES)])
    assert round(best.corpus_score().score / 100, 4) == 0.6944
    none = run({"tokenize": "whitespace"}, [("non matching hypothesis", ["this is a cat"])])
    assert none.corpus_score().score == 0.0
    hypothesis2 = (
        "It is to insure the troops forever hearing the activity guidebook that party direct"
    )
    assert_equal_to_nltk(
        {"tokenize": "whitespace"}, [(HYPOTHESIS1, REFERENCES), (hypothesis2, REFERENCES)]
    )


# -- generated text --------------------------------------------------------------------------

# Words with stems, inflections and WordNet synonyms among them, so all three stages match.
VOCABULARY = [
    "the",
    "a",
    "cat",
    "cats",
    "dog",
    "dogs",
    "run",
    "runs",
    "running",
    "ran",
    "quick",
    "fast",
    "rapid",
    "big",
    "large",
    "great",
    "house",
    "home",
    "houses",
    "buy",
    "bought",
    "purchase",
    "purchased",
    "went",
    "go",
    "goes",
    "gone",
    "child",
    "children",
    "better",
    "good",
    "well",
    "happy",
    "glad",
    "car",
    "automobile",
    "cars",
    "begin",
    "start",
    "started",
    "commence",
    "wise",
    "sage",
    "sat",
    "sit",
    "sitting",
    "mat",
    "on",
    "under",
    "was",
    "were",
    "is",
    "be",
    "been",
    "geese",
    "goose",
    "mice",
    "mouse",
    "leaves",
    "leaf",
    "axes",
    "ax",
    "bigger",
    "biggest",
    "heed",
    "obey",
    "obeys",
    "command",
    "commands",
    "party",
    "guide",
    "guiding",
    "military",
    "army",
    "forever",
]
words_text = st.lists(st.sampled_from(VOCABULARY), max_size=25).map(" ".join)
meteor_text = words_text | any_text
parameters = st.fixed_dictionaries(
    {},
    optional={
        "alpha": st.floats(0.0, 1.0),
        "beta": st.floats(0.0, 6.0),
        "gamma": st.floats(0.0, 1.0),
        "tokenize": st.sampled_from(["nltk", "whitespace"]),
    },
)


@settings(max_examples=150, deadline=None, suppress_health_check=LARGE)
@given(
    options=parameters,
    examples=st.lists(
        st.tuples(meteor_text, st.lists(meteor_text, min_size=1, max_size=4)),
        min_size=1,
        max_size=5,
    ),
)
def test_equals_nltk_on_generated_text(options: dict[str, Any], examples: Corpus) -> None:
    assert_equal_to_nltk(options, examples)


@settings(max_examples=300, deadline=None)
@given(text=any_text | tokenizer_soup | words_text)
def test_tokenizer_equals_nltk_word_tokenize_on_a_line(text: str) -> None:
    assert nltk_word_tokenize(text) == word_tokenize(text, preserve_line=True)


@pytest.mark.parametrize("word", ["run", "ran", "geese", "better", "bought", "leaves", "xyzzy"])
def test_synonyms_are_nltks_lemma_names(word: str) -> None:
    from nltk.corpus import wordnet as nltk_wordnet

    expected = {
        lemma.name()
        for synset in nltk_wordnet.synsets(word)
        for lemma in synset.lemmas()
        if "_" not in lemma.name()
    } | {word}
    assert wordnet_module.load_wordnet(WORDNET).synonyms(word) == expected


# -- the metric ------------------------------------------------------------------------------


def test_signature_direction_and_statistics() -> None:
    metric = metric_from_spec(f"meteor:alpha=0.8,tokenize=whitespace,wordnet={WORDNET}")
    assert metric.higher_is_better is True
    result = score_corpus(
        [("m", metric)], ["the cat sat", "a dog"], [["the cat sat"], ["a dog ran", "dogs"]]
    )[0]
    assert str(result.signature) == (
        "nrefs:var|tok:whitespace|alpha:0.8|beta:3|gamma:0.5|stem:porter-nltk3.10|wn:3.0"
        "|version:0.1.0"
    )
    # (score, 1) per example: a slice's score is the mean of its examples'.
    per_example = result.per_example()
    assert result.corpus_score([1]).score == pytest.approx(per_example[1])
    assert result.corpus_score().score == pytest.approx(sum(per_example) / 2)
    assert result.corpus_score().components == {"count": 2}


def test_without_wordnet_the_error_says_how_to_get_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(wordnet_module, "candidate_locations", lambda option=None: [tmp_path])
    wordnet_module.load_wordnet.cache_clear()
    try:
        with pytest.raises(MetricError, match=r"nltk\.downloader wordnet") as caught:
            create_metric("meteor")
        assert "apt-get install wordnet-base" in str(caught.value)
        assert "GOLDGATE_WORDNET" in str(caught.value)
        with pytest.raises(MetricError, match=f"no WordNet dictionary files in {tmp_path}"):
            wordnet_module.load_wordnet(str(tmp_path))
        # In a configuration the error points at the metric's line.
        from goldgate.errors import ConfigError
        from goldgate.model.config_loading import load_config

        (tmp_path / "g.jsonl").write_text('{"id": "a", "input": "x", "reference": "y"}\n')
        (tmp_path / "goldgate.yaml").write_text(
            "version: 1\nsystem: {predictions: p.jsonl}\nsuites:\n  s:\n    goldens: g.jsonl\n"
            "    metrics:\n      meteor: {}\n"
        )
        with pytest.raises(ConfigError, match=r"goldgate\.yaml:7.*meteor.*nltk\.downloader"):
            load_config(tmp_path / "goldgate.yaml")
    finally:
        wordnet_module.load_wordnet.cache_clear()


def test_wordnet_from_an_nltk_data_dir_or_a_zip(tmp_path: Path) -> None:
    import zipfile

    archive = tmp_path / "wordnet.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        for path in WORDNET_DIR.iterdir():
            if path.name.startswith(("data.", "index.")) or path.name.endswith(".exc"):
                handle.write(path, f"wordnet/{path.name}")
    from_zip = wordnet_module.load_wordnet(str(archive))
    assert from_zip.version == "3.0"
    assert from_zip.synonyms("bought") == wordnet_module.load_wordnet(WORDNET).synonyms("bought")
    env = {**os.environ, "NLTK_DATA": str(NLTK_DATA)}
    env.pop("GOLDGATE_WORDNET", None)
    found = subprocess.run(
        [sys.executable, "-c", "from goldgate.metrics.meteor.wordnet import load_wordnet as w;"
         "print(w().source)"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert found.stdout.strip() == str(WORDNET_DIR)


def test_the_runtime_never_imports_nltk() -> None:
    code = (
        "import sys; from goldgate.metrics.engine import score_corpus;"
        "from goldgate.metrics.registry import create_metric;"
        f"m = create_metric('meteor', {{'wordnet': {WORDNET!r}}});"
        "r = score_corpus([('m', m)], ['the cats ran'], [['a cat runs']])[0];"
        "print(r.corpus_score().score, 'nltk' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    score, imported = done.stdout.split()
    assert float(score) > 0 and imported == "False"


# -- real data: samples here, the whole WMT21 de-en file in benchmarks/bench_metrics.py ------


def _load(filename: str, size: int, seed: int = 7) -> Corpus:
    path = DATA / filename
    if not path.exists():
        pytest.skip(f"{path} is absent (real data lives beside the repository)")
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    sample = random.Random(seed).sample(rows, size)
    return [(row["candidate"], row["references"]) for row in sample]


@pytest.mark.parametrize(
    ("filename", "size", "options"),
    [
        ("mt_wmt21_newstest2021_de-en.Facebook-AI.jsonl", 150, {}),
        ("mt_wmt21_newstest2021_de-en.UEdin.jsonl", 60, {"alpha": 0.85, "beta": 0.2}),
        ("mt_wmt21_newstest2021_en-zh.NiuTrans.jsonl", 30, {}),
        ("summ_summeval_cnndm.jsonl", 25, {"tokenize": "whitespace"}),
    ],
)
def test_real_data_samples(filename: str, size: int, options: dict[str, Any]) -> None:
    assert_equal_to_nltk(options, _load(filename, size))


def test_meteor_and_ter_in_a_gated_suite_with_slices_and_the_bootstrap(tmp_path: Path) -> None:
    """Both metrics through the config, the gate (slices, bootstrap), the result and its schema."""
    from goldgate.model.config_loading import load_config
    from goldgate.model.config_schema import config_json_schema
    from goldgate.runner import bless, run

    rows = [
        {"id": f"s{i}", "input": str(i), "reference": f"the cats sat on mat number {i}"}
        | {"tags": ["even" if i % 2 == 0 else "odd"]}
        for i in range(12)
    ]
    (tmp_path / "goldens").mkdir()
    (tmp_path / "goldens" / "mt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    def outputs(words: str) -> None:
        (tmp_path / "preds").mkdir(exist_ok=True)
        lines = [json.dumps({"id": f"s{i}", "output": words.format(i=i)}) + "\n" for i in range(12)]
        (tmp_path / "preds" / "mt.jsonl").write_text("".join(lines))

    (tmp_path / "goldgate.yaml").write_text(
        "version: 1\nsystem:\n  predictions: 'preds/{suite}.jsonl'\nsuites:\n  mt:\n"
        "    goldens: goldens/mt.jsonl\n"
        f"    metrics: {{meteor: {{wordnet: {WORDNET!r}}}, ter: {{}}}}\n"
        "    gate: {meteor: {max_drop: 1.0, slices: true}, ter: {max_drop: 1.0}}\n"
        "significance: {resamples: 200, seed: 0}\nreport: {dir: out, formats: [json]}\n"
    )
    outputs("the cat sits on the mat number {i}")
    bless(load_config(tmp_path / "goldgate.yaml"))
    outputs("a dog {i}")
    result = run(load_config(tmp_path / "goldgate.yaml"))
    assert result.exit_code == 1
    suite = result.suites[0]
    by_metric = {m.metric: m for m in suite.metrics}
    assert by_metric["meteor"].delta is not None and by_metric["meteor"].delta < 0
    assert by_metric["ter"].delta is not None and by_metric["ter"].delta > 0
    assert {s.tag for s in suite.slices} == {"even", "odd"}
    failed = {(c.metric, c.slice) for c in result.checks() if c.status.value == "fail"}
    assert {("meteor", None), ("meteor", "even"), ("meteor", "odd"), ("ter", None)} <= failed
    assert "wn:3.0" in by_metric["meteor"].signature
    metrics_schema = config_json_schema()["$defs"]["SuiteConfig"]["properties"]["metrics"]
    assert {"meteor", "ter"} <= set(metrics_schema["properties"])


def _synonyms_in_child(word: str) -> list[str]:
    return sorted(wordnet_module.load_wordnet(WORDNET).synonyms(word))


def test_lookups_are_the_same_in_processes_forked_after_loading() -> None:
    # NLTK's reader shares file positions with forked workers and reads wrong lines there;
    # goldgate's reads an in-memory copy by offset.
    import multiprocessing

    words = ["bought", "geese", "running", "better", "leaves", "commands", "happy", "axes"]
    parent = wordnet_module.load_wordnet(WORDNET)
    parent.synonyms("dog")  # loaded and used before the fork
    with multiprocessing.get_context("fork").Pool(2) as pool:
        children = pool.map(_synonyms_in_child, words)
    assert children == [sorted(parent.synonyms(word)) for word in words]
