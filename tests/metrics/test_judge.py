"""``llm_judge`` against a fake OpenAI-compatible server on 127.0.0.1 that scripts its replies."""

from __future__ import annotations

import dataclasses
import json
import re
import shutil
import ssl
import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from goldgate.cli.main import main
from goldgate.errors import GoldgateError, MetricError
from goldgate.gate.stats import as_stats_array, compare
from goldgate.metrics.batch import MetricContext
from goldgate.metrics.engine import score_corpus
from goldgate.metrics.registry import create_metric
from goldgate.metrics.semantic import judge_http
from goldgate.metrics.semantic.judge import LLMJudge
from tests.metrics.fake_openai import (
    COMPLETION_TOKENS,
    PROMPT_TOKENS,
    FakeJudge,
    Reply,
    Seen,
    fake_judge,
    valid,
)

KEY = "sk-test-SECRET-9f8e7d"
CANDIDATES = ["Paris is the capital.", "Lyon, probably.", "It is Paris."]
REFERENCES = [["Paris"], ["Paris"], ["Paris", "The capital is Paris"]]
INPUTS = ["Capital of France?", "Capital of France?", {"question": "Capital of France?"}]


def by_answer(seen: Seen) -> Reply:
    """Answers mentioning Paris get 5 of 5, others 1."""
    good = "Paris" in seen.candidate
    return valid(5 if good else 1, "names Paris" if good else "wrong city")


def judge(server: FakeJudge, tmp_path: Path, **options: Any) -> LLMJudge:
    settings = {
        "base_url": server.url,
        "model": "judge-1",
        "api_key_env": "JUDGE_KEY",
        "rubric": "Score 5 when the answer is correct, 1 when it is wrong.",
        "backoff_s": 0.001,
        "timeout_s": 5,
        **options,
    }
    metric = create_metric("llm_judge", settings)
    assert isinstance(metric, LLMJudge)
    metric.bind(
        MetricContext(root=tmp_path, cache_dir=tmp_path / ".goldgate", environ={"JUDGE_KEY": KEY})
    )
    return metric


def score(metric: LLMJudge) -> Any:
    (result,) = score_corpus(
        [("llm_judge", metric)], CANDIDATES, REFERENCES, inputs=INPUTS, ids=["a", "b", "c"]
    )
    return result


def test_scores_requests_cost_and_cache(tmp_path: Path) -> None:
    with fake_judge(by_answer) as server:
        metric = judge(server, tmp_path, price_input_per_mtok=2.5, price_output_per_mtok=10)
        result = score(metric)
        assert result.per_example() == [100.0, 0.0, 100.0]
        assert result.corpus_score().score == pytest.approx(200 / 3)
        assert result.notes == ("names Paris", "wrong city", "names Paris")
        components = result.corpus_score().components
        assert components["prompt_tokens"] == 3 * PROMPT_TOKENS
        assert components["completion_tokens"] == 3 * COMPLETION_TOKENS
        cost = (3 * PROMPT_TOKENS * 2.5 + 3 * COMPLETION_TOKENS * 10) / 1e6
        assert components["cost_usd"] == pytest.approx(cost)
        assert components["judgments"] == 3
        # What the judge was sent: deterministic settings, the key in the header only.
        assert len(server.requests) == 3
        first = next(r for r in server.requests if r.candidate == CANDIDATES[0])
        assert first.headers["Authorization"] == f"Bearer {KEY}"
        assert first.body["model"] == "judge-1"
        assert first.body["temperature"] == 0 and first.body["seed"] == 0
        assert first.body["response_format"] == {"type": "json_object"}
        user = first.body["messages"][1]["content"]
        assert "## Input\nCapital of France?" in user and "## Reference answers\n1. Paris" in user
        third = next(r for r in server.requests if r.candidate == CANDIDATES[2])
        assert (
            '## Input\n{"question": "Capital of France?"}' in third.body["messages"][1]["content"]
        )
        assert "Score 5 when" in first.body["messages"][0]["content"]

        # A rerun is served from the cache: no request at all, the same numbers.
        again = judge(server, tmp_path)
        assert score(again).per_example() == result.per_example()
        assert len(server.requests) == 3 and again.cache_hits == 3
        # A changed rubric is another judgment.
        score(judge(server, tmp_path, rubric="Be strict."))
        assert len(server.requests) == 6
    cache_text = "".join(p.read_text() for p in (tmp_path / ".goldgate" / "judge").iterdir())
    assert KEY not in cache_text and "names Paris" in cache_text


@pytest.mark.parametrize(
    "failure",
    [
        Reply(content="The score is 5."),  # not JSON
        Reply(content='```json\n{"score": 5, "rationale": "x"}\n```'),  # fenced: not strict JSON
        Reply(content='{"score": 9, "rationale": "x"}'),  # off the 1-5 scale
        Reply(content='{"score": "5", "rationale": "x"}'),  # a string, not a number
        Reply(content='{"score": 5}'),  # no rationale
        Reply(status=429, headers={"Retry-After": "0"}, body='{"error": "rate limited"}'),
        Reply(status=500, body="upstream failed"),
        Reply(status=503),
        Reply(content=None, delay_s=1.0),  # slower than timeout_s: the client gives up
    ],
    ids=["prose", "fenced", "off-scale", "string", "missing", "429", "500", "503", "slow"],
)
def test_a_failed_call_is_retried(tmp_path: Path, failure: Reply) -> None:
    with fake_judge(by_answer) as server:
        server.script.extend([failure, failure])
        metric = judge(server, tmp_path, timeout_s=0.3, concurrency=1)
        assert score(metric).per_example() == [100.0, 0.0, 100.0]
        assert metric.calls.retries == 2
        assert metric.calls.requests == 5


@pytest.mark.parametrize(
    ("failure", "message"),
    [
        (Reply(content="I think it deserves a 4."), "does not parse: not a JSON object"),
        (Reply(status=500, body="boom"), "HTTP 500: boom"),
        (Reply(status=429), "HTTP 429"),
    ],
)
def test_retries_run_out_into_an_error_naming_the_id_never_a_zero(
    tmp_path: Path, failure: Reply, message: str
) -> None:
    with fake_judge(by_answer) as server:
        # Example "b" always fails; the others are fine.
        server.grade = lambda seen: failure if "Lyon" in seen.candidate else by_answer(seen)
        metric = judge(server, tmp_path, max_retries=2)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
    text = str(raised.value)
    assert text.startswith("llm_judge: example 'b': ")
    assert message in text and "after 3 attempts" in text
    assert KEY not in text


def test_a_client_error_is_not_retried_and_the_key_is_redacted(tmp_path: Path) -> None:
    with fake_judge() as server:
        server.grade = lambda seen: Reply(status=401, body=f"bad key {KEY}")
        metric = judge(server, tmp_path)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
        assert len(server.requests) <= 3  # at most one per example in flight, none retried
    assert "HTTP 401: bad key ***" in str(raised.value)
    assert KEY not in str(raised.value)


def test_samples_average_judgments_and_report_their_spread(tmp_path: Path) -> None:
    def by_seed(seen: Seen) -> Reply:
        # Seeds 0, 1, 2 give 5, 3, 4 for a right answer: a judge that disagrees with itself.
        right = {0: 5, 1: 3, 2: 4}[seen.body["seed"]]
        return valid(right if "Paris" in seen.candidate else 1)

    with fake_judge(by_seed) as server:
        metric = judge(server, tmp_path, samples=3, seed=0)
        result = score(metric)
        assert len(server.requests) == 9
        assert sorted({r.body["seed"] for r in server.requests}) == [0, 1, 2]
    # (5, 3, 4) on 1-5 is (100, 50, 75): mean 75, population sd 20.41
    assert result.per_example() == pytest.approx([75.0, 0.0, 75.0])
    components = result.corpus_score().components
    assert components["judgments"] == 9
    assert components["judge_spread"] == pytest.approx((2 * (1250 / 3) ** 0.5) / 3)
    assert "n:3" in str(result.signature)


def test_concurrency_asks_in_parallel(tmp_path: Path) -> None:
    with fake_judge(by_answer) as server:
        server.grade = lambda seen: Reply(
            content=json.dumps({"score": 5, "rationale": "x"}), delay_s=0.2
        )
        metric = judge(server, tmp_path, concurrency=3)
        score(metric)
        assert len(server.requests) == 3


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"model": "m", "rubric": "r"}, "base_url is required"),
        ({"base_url": "ftp://x", "model": "m", "rubric": "r"}, "http"),
        ({"base_url": "http://u:p@x/v1", "model": "m", "rubric": "r"}, "credentials"),
        ({"base_url": "http://x/v1?key=1", "model": "m", "rubric": "r"}, "credentials"),
        ({"base_url": "http://x/v1", "rubric": "r"}, "model is required"),
        ({"base_url": "http://x/v1", "model": "m"}, "exactly one of rubric"),
        ({"base_url": "http://x", "model": "m", "rubric": "r", "scale_max": 0}, "scale_max"),
        ({"base_url": "http://x", "model": "m", "rubric": "r", "fields": ["input"]}, "candidate"),
    ],
)
def test_bad_options_are_config_errors(options: dict[str, Any], message: str) -> None:
    with pytest.raises(MetricError, match=message):
        create_metric("llm_judge", options)


def test_a_missing_key_variable_is_an_error_naming_it(tmp_path: Path) -> None:
    metric = create_metric(
        "llm_judge", {"base_url": "http://127.0.0.1:9/v1", "model": "m", "rubric": "r",
                      "api_key_env": "NO_SUCH_KEY_VAR"}
    )  # fmt: skip
    metric.bind(MetricContext(root=tmp_path, cache_dir=None, environ={}))  # type: ignore[attr-defined]
    with pytest.raises(MetricError, match="NO_SUCH_KEY_VAR"):
        score_corpus([("j", metric)], ["a"], [["b"]], inputs=["q"])


def qa_project(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    goldens: list[dict[str, Any]],
    judge_yaml: str,
    max_drop: float,
    top: str,
) -> Callable[[list[str]], None]:
    """A project in ``tmp_path`` (the cwd now) with suite ``qa`` scored by ``llm_judge``.

    ``judge_yaml`` holds the judge's options, ``max_drop`` its gate, ``top`` the configuration's
    other top-level keys. Returns a function writing the system's outputs in golden order.
    """
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    (tmp_path / "goldens.jsonl").write_text(
        "".join(json.dumps(g) + "\n" for g in goldens), encoding="utf-8"
    )
    (tmp_path / "out").mkdir()
    config = textwrap.dedent(
        """
        version: 1
        system: {predictions: "out/{suite}.jsonl"}
        suites:
          qa:
            goldens: goldens.jsonl
            metrics:
              llm_judge:
        """
    )
    config += textwrap.indent(textwrap.dedent(judge_yaml).strip(), " " * 8) + "\n"
    config += f"    gate:\n      llm_judge: {{max_drop: {max_drop}}}\n"
    config += textwrap.dedent(top).strip() + "\n"
    (tmp_path / "goldgate.yaml").write_text(config, encoding="utf-8")

    def outputs(texts: list[str]) -> None:
        (tmp_path / "out" / "qa.jsonl").write_text(
            "".join(
                json.dumps({"id": g["id"], "output": t}) + "\n"
                for g, t in zip(goldens, texts, strict=True)
            ),
            encoding="utf-8",
        )

    return outputs


def test_gate_end_to_end_with_rationale_in_the_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Bless, rerun from the cache, then a regression through the real command, exit 1."""
    monkeypatch.setenv("JUDGE_KEY", KEY)
    goldens = [
        {
            "id": f"q{i}",
            "input": f"Capital of country {i}?",
            "references": ["Paris"],
            "tags": ["odd" if i % 2 else "even"],
        }
        for i in range(12)
    ]
    (tmp_path / "rubric.md").write_text("Correct answers name Paris.\n", encoding="utf-8")
    with fake_judge(by_answer) as server:
        outputs = qa_project(
            tmp_path,
            monkeypatch,
            goldens,
            f"""
            base_url: {server.url}
            model: judge-1
            api_key_env: JUDGE_KEY
            rubric_file: rubric.md
            backoff_s: 0.001
            price_input_per_mtok: 1.0
            """,
            5.0,
            "report: {formats: [md, html, json]}",
        )
        outputs([f"It is Paris ({i})." for i in range(12)])
        assert main(["bless", "-q"]) == 0
        assert len(server.requests) == 12
        assert main(["run"]) == 0
        assert len(server.requests) == 12  # every judgment came from the cache
        report = tmp_path / "goldgate-report"
        result = json.loads((report / "result.json").read_text())
        calls = {"requests": 0, "retries": 0, "cached": 12}
        assert result["suites"][0]["metrics"][0]["calls"] == calls
        # Half the answers go wrong: a significant drop. One call fails once and is retried.
        outputs([f"It is Lyon ({i})." if i % 2 else f"It is Paris ({i})." for i in range(12)])
        server.script.append(Reply(status=503))
        assert main(["run"]) == 1
        assert len(server.requests) == 19
        result = json.loads((report / "result.json").read_text())
        # This run's traffic beside the cost of judging the whole set (cached judgments too).
        calls = {"requests": 7, "retries": 1, "cached": 6}
        assert result["suites"][0]["metrics"][0]["calls"] == calls
        # Slices: the odd examples went wrong, the even ones did not.
        slices = {sl["tag"]: sl["metrics"][0] for sl in result["suites"][0]["slices"]}
        assert slices["odd"]["current"] == 0.0 and slices["odd"]["baseline"] == 100.0
        assert slices["even"]["current"] == 100.0 and slices["even"]["delta"] == 0.0
        this_run = "this run: 7 requests (1 retry), 6 judgments from the cache"
        assert this_run in (report / "report.md").read_text()
        assert this_run in (report / "report.html").read_text()
        from goldgate.model.result import RunResult

        loaded = RunResult.from_json_file(report / "result.json")
        regressed = next(ex for ex in loaded.suites[0].examples if ex.id == "q1")
        assert regressed.notes == {"llm_judge": "wrong city"}
        assert regressed.scores["llm_judge"] == 0.0
        metric = result["suites"][0]["metrics"][0]
        assert metric["components"]["prompt_tokens"] == 12 * PROMPT_TOKENS
        markdown = (report / "report.md").read_text()
        assert f"12 judgments, {12 * PROMPT_TOKENS:,} prompt +" in markdown
        assert "**llm_judge**: wrong city" in markdown
        html = (report / "report.html").read_text()
        assert "wrong city" in html and "llm_judge: 12 judgments" in html
        # A judge that cannot be read is an error (exit 2) naming the id, not a regression.
        outputs([f"Maybe Marseille ({i})." for i in range(12)])
        server.grade = lambda seen: Reply(content="five")
        assert main(["run"]) == 2
    out, err = capsys.readouterr()
    assert "llm_judge: example 'q0'" in out + err
    result = json.loads((report / "result.json").read_text())
    assert result["verdict"] == "error"
    for path in [*report.iterdir(), *(tmp_path / ".goldgate").rglob("*")]:
        if path.is_file():
            data = path.read_bytes()
            if path.suffix == ".gz":
                import gzip

                data = gzip.decompress(data)
            assert KEY.encode() not in data, path
    assert KEY not in out + err


def noisy_judge(seen: Seen) -> Reply:
    """A judge that disagrees with itself: sample k (seed k) of an answer gets a scripted grade.

    Version 1 of every answer gets 5, 1, 5, 1 (mean 50 on 0-100); version 2 of an even
    example gets 5, 1, 4, 1 (43.75), of an odd one the same as version 1. Version 2 is worse
    by 3.125 points on average, on every even example alike, while the judge's own spread is
    50 points.
    """
    number, version = re.fullmatch(r"answer (\d+) v(\d)", seen.candidate).groups()  # type: ignore[union-attr]
    grades = [5, 1, 5, 1] if version == "1" or int(number) % 2 else [5, 1, 4, 1]
    return valid(grades[seen.body["seed"]])


def test_judge_noise_is_resampled_so_a_delta_within_it_is_not_significant(
    tmp_path: Path,
) -> None:
    ids = [f"e{i:02d}" for i in range(20)]
    references = [["a reference"]] * len(ids)
    with fake_judge(noisy_judge) as server:
        metric = judge(server, tmp_path, samples=4, fields=["candidate", "references"])
        sides = []
        for version in (2, 1):
            candidates = [f"answer {i} v{version}" for i in range(len(ids))]
            (result,) = score_corpus([("j", metric)], candidates, references, ids=ids)
            sides.append(as_stats_array(result.stats, len(metric.stat_names)))
        assert len(server.requests) == 2 * 4 * len(ids)
    current, baseline = sides
    assert metric.stat_names[6:] == ("judgment_1", "judgment_2", "judgment_3", "judgment_4")
    assert current.shape == (1, 20, 10)

    def bootstrap(metric: Any, current: Any, baseline: Any) -> Any:
        return compare(metric, current, baseline, resamples=1000, alpha=0.05, seed=7)

    two_level = bootstrap(metric, current, baseline)
    # The same examples with only their pooled statistics: the one-level bootstrap resamples
    # examples whose means it takes as exact, and calls the drop significant.
    plain = LLMJudge(dataclasses.replace(metric.options, samples=1))
    one_level = bootstrap(plain, current[:, :, :6], baseline[:, :, :6])
    assert two_level.delta == pytest.approx(-3.125) and one_level.delta == pytest.approx(-3.125)
    assert one_level.significant(0.05)
    assert not two_level.significant(0.05)
    assert two_level.interval.low < one_level.interval.low
    assert two_level.interval.high > 0 > one_level.interval.high
    # Deterministic for the seed; another seed draws other judgments.
    assert bootstrap(metric, current, baseline) == two_level
    other = compare(metric, current, baseline, resamples=1000, alpha=0.05, seed=8)
    assert other.interval != two_level.interval


def test_gate_forgives_a_drop_within_the_judges_noise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Through the real command: the drop above is forgiven with samples 4 (one-level: fail)."""
    goldens = [{"id": f"e{i:02d}", "input": "q", "references": ["ref"]} for i in range(20)]

    def outputs(version: int) -> None:
        write([f"answer {i} v{version}" for i in range(20)])

    with fake_judge(noisy_judge) as server:
        write = qa_project(
            tmp_path,
            monkeypatch,
            goldens,
            f"""
            base_url: {server.url}
            model: judge-1
            rubric: Grade it.
            fields: [candidate, references]
            samples: 4
            """,
            1.0,
            """
            significance: {seed: 7}
            report: {formats: [json]}
            """,
        )
        outputs(1)
        assert main(["bless", "-q"]) == 0
        outputs(2)
        assert main(["run", "-q"]) == 0
    result = json.loads((tmp_path / "goldgate-report" / "result.json").read_text())
    (check,) = result["suites"][0]["checks"]
    assert check["status"] == "forgiven", check["message"]
    assert check["delta"] == pytest.approx(-3.125)
    assert check["p_value"] > 0.5
    assert check["interval"]["low"] < -10 and check["interval"]["high"] > 10


@pytest.mark.parametrize("trickle", ["status", "body"])
def test_timeout_s_is_a_deadline_for_the_whole_call(tmp_path: Path, trickle: str) -> None:
    """A server sending a few bytes every 50 ms never trips a per-read timeout of 0.3 s; the
    whole reply (~1.5 s of trickle) must still miss the 0.3 s deadline and be retried."""
    slow = Reply(content=json.dumps({"score": 5, "rationale": "slow"}), trickle=trickle)
    with fake_judge(by_answer) as server:
        server.script.append(slow)
        metric = judge(server, tmp_path, timeout_s=0.3, concurrency=1, max_retries=0)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
        assert "no reply within timeout_s=0.3 (after 1 attempt)" in str(raised.value)
        # Cut off at the deadline, not read to the end and then called late.
        assert server.trickle_outcome() == "hung up"
        server.hung_up.clear()
        # Given a retry, the next (prompt) reply is used: the cut-short one left no trace.
        server.script.append(slow)
        retried = judge(server, tmp_path, timeout_s=0.3, concurrency=1, max_retries=1)
        assert score(retried).per_example() == [100.0, 0.0, 100.0]
        assert retried.calls.retries == 1


def test_an_https_endpoint_goes_through_tls(tmp_path: Path) -> None:
    """The deadline-watched TLS connection is used for https: a plain-HTTP server fails the
    handshake, which is a clear, retried connection error naming the endpoint."""
    with fake_judge(by_answer) as server:
        url = server.url.replace("http://", "https://")
        metric = judge(server, tmp_path, base_url=url, max_retries=0, concurrency=1)
        with pytest.raises(GoldgateError) as raised:
            score(metric)
    assert f"cannot reach {url}" in str(raised.value)
    assert "SSL" in str(raised.value)


def test_the_score_command_judges_rows_with_their_inputs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`goldgate score` with an llm_judge spec whose base_url holds a port."""
    monkeypatch.setenv("JUDGE_KEY", KEY)
    rows = [
        {"candidate": c, "references": r, "input": i}
        for c, r, i in zip(CANDIDATES, REFERENCES, INPUTS, strict=True)
    ]
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    (tmp_path / "rubric.md").write_text("Paris is right.", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    with fake_judge(by_answer) as server:
        spec = (
            f"llm_judge:base_url={server.url},model=judge-1,api_key_env=JUDGE_KEY,"
            "rubric_file=rubric.md"
        )
        code = main(["score", str(data), "--metric", spec, "--per-example", "--json"])
        out, err = capsys.readouterr()
        assert code == 0, err
        assert len(server.requests) == 3
        assert server.requests[0].headers["Authorization"] == f"Bearer {KEY}"
        assert any("## Input\nCapital of France?" in r.body["messages"][1]["content"]
                   for r in server.requests)  # fmt: skip
    entry = json.loads(out)["metrics"][spec]
    assert entry["per_example"] == [100.0, 0.0, 100.0]
    assert KEY not in out + err
    assert list((tmp_path / ".goldgate" / "judge").iterdir())


@pytest.fixture
def tls_files(tmp_path: Path) -> tuple[Path, Path]:
    """A self-signed certificate for 127.0.0.1 (made with Debian's openssl)."""
    openssl = shutil.which("openssl")
    if openssl is None:
        pytest.skip("openssl is not installed")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        [openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-keyout", str(key), "-out", str(cert), "-subj", "/CN=127.0.0.1",
         "-addext", "subjectAltName=IP:127.0.0.1"],
        check=True, capture_output=True,
    )  # fmt: skip
    return cert, key


def test_tls_calls_work_and_keep_their_deadline(
    tmp_path: Path, tls_files: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over https (the usual case: a hosted judge), a reply is read, and a reply trickled
    through TLS still misses the deadline: the watched socket is the TLS one."""
    cert, key = tls_files
    trusting = ssl.create_default_context(cafile=str(cert))
    monkeypatch.setattr(judge_http, "_tls_context", lambda: trusting)
    with fake_judge(by_answer, tls=(cert, key)) as server:
        assert server.url.startswith("https://127.0.0.1:")
        metric = judge(server, tmp_path, concurrency=1)
        assert score(metric).per_example() == [100.0, 0.0, 100.0]
        slow = Reply(content=json.dumps({"score": 5, "rationale": "slow"}), trickle="body")
        server.script.append(slow)
        late = judge(server, tmp_path / "other", timeout_s=0.3, concurrency=1, max_retries=0)
        with pytest.raises(GoldgateError, match=r"no reply within timeout_s=0.3"):
            score(late)
        # The TLS socket itself was shut at the deadline (not the raw one it wraps).
        assert server.trickle_outcome() == "hung up"
