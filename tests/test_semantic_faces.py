"""embedding_similarity and llm_judge through the pytest plugin, in one suite with the others.

The project holds a model2vec model built in the test and a judge behind the fake
OpenAI-compatible server; ``pytest --goldgate`` runs in a subprocess as a user would.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from tests.metrics.fake_openai import Reply, Seen, fake_judge, valid
from tests.metrics.test_embedding import build_model

pytest_plugins = ["pytester"]
pytest.importorskip("model2vec")

QUIET = ("-p", "no:hypothesispytest", "-p", "no:cacheprovider")
KEY = "sk-faces-SECRET-1234"


def by_answer(seen: Seen) -> Reply:
    return valid(5, "right") if "cat" in seen.candidate else valid(1, "unrelated answer")


def test_pytest_plugin_gates_both_metrics(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = Path(pytester.path)
    build_model(root / "models" / "tiny")
    goldens = [
        {"id": f"g{i}", "input": f"what sat? {i}", "references": ["the cat sat on the mat"]}
        for i in range(12)
    ]
    (root / "goldens.jsonl").write_text("".join(json.dumps(g) + "\n" for g in goldens))
    (root / "out").mkdir()

    def outputs(bad: int) -> None:
        rows = [
            {"id": g["id"], "output": "a red car" if i < bad else "the cat sat on a mat"}
            for i, g in enumerate(goldens)
        ]
        (root / "out" / "sem.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))

    monkeypatch.setenv("JUDGE_KEY", KEY)
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    with fake_judge(by_answer) as server:
        (root / "goldgate.yaml").write_text(
            textwrap.dedent(
                f"""
                version: 1
                system: {{predictions: "out/{{suite}}.jsonl"}}
                suites:
                  sem:
                    goldens: goldens.jsonl
                    metrics:
                      embedding_similarity: {{model: models/tiny}}
                      llm_judge:
                        base_url: {server.url}
                        model: judge-1
                        api_key_env: JUDGE_KEY
                        rubric: "5 when the answer says the cat sat, 1 otherwise."
                        backoff_s: 0.001
                      token_f1: {{}}
                    gate:
                      embedding_similarity: {{max_drop: 2.0}}
                      llm_judge: {{max_drop: 5.0}}
                report: {{formats: [json]}}
                """
            )
        )
        outputs(bad=0)
        blessed = pytester.runpytest_subprocess("--goldgate-bless", *QUIET)
        assert blessed.ret == 0, blessed.stdout.str()
        calls = len(server.requests)
        assert calls == 12

        passing = pytester.runpytest_subprocess("--goldgate", *QUIET)
        passing.assert_outcomes(passed=2)
        assert len(server.requests) == calls  # from the cache

        outputs(bad=6)
        failing = pytester.runpytest_subprocess("--goldgate", *QUIET)
        failing.assert_outcomes(failed=2)
        text = failing.stdout.str()
        assert "goldgate::sem::embedding_similarity" in text and "llm_judge" in text
        assert KEY not in text
