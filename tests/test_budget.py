"""A cost budget (issue 34, section 4): a run stops before the call that would take its
spend past ``budget.max_usd``, exits 2 saying what was spent, and loses nothing."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.metrics.budget import Budget, BudgetExceeded
from tests.metrics.fake_openai import COMPLETION_TOKENS, PROMPT_TOKENS, fake_judge

N = 10
# $1,000 per million tokens both ways: a judgment (120 + 30 tokens) costs $0.15
PRICE = 1000.0
CALL_USD = (PROMPT_TOKENS + COMPLETION_TOKENS) * PRICE / 1e6

CONFIG = """\
version: 1
system: {{callable: "{module}:answer"}}
suites:
  qa:
    goldens: goldens.jsonl
    metrics:
      llm_judge:
        base_url: {url}
        model: judge-1
        rubric: "5 when the answer is right, 1 otherwise."
        max_tokens: 50
        concurrency: 1
        backoff_s: 0.001
        price_input_per_mtok: {price}
        price_output_per_mtok: {price}
budget: {{max_usd: {budget}}}
report: {{dir: out}}
history: off
"""

SYSTEM = """\
from pathlib import Path


def answer(question):
    with open(Path(__file__).parent / "calls.log", "a") as log:
        log.write(question + "\\n")
    return "answer " + question.split()[-1]
"""


def _project(root: Path, url: str, budget: float, module: str) -> None:
    (root / "goldgate.yaml").write_text(
        CONFIG.format(module=module, url=url, price=PRICE, budget=budget), encoding="utf-8"
    )


def test_a_budget_smaller_than_the_judges_cost_stops_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    module = f"paid_{uuid.uuid4().hex[:12]}"
    (tmp_path / f"{module}.py").write_text(SYSTEM, encoding="utf-8")
    rows = [
        {"id": f"q{i:02d}", "input": f"question {i}", "references": [f"answer {i}"]}
        for i in range(N)
    ]
    (tmp_path / "goldens.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    with fake_judge() as server:
        # $0.50 pays for 3 judgments of $0.15; the 4th would take the spend to $0.60
        _project(tmp_path, server.url, 0.5, module)
        assert main(["run"]) == 2
        captured = capsys.readouterr()
        assert len(server.requests) == 3
        assert "budget exhausted: spent $0.4500 of budget.max_usd $0.50 on 3 calls" in (
            captured.err
        )
        assert "$0.0500 left" in captured.err
        assert "the next call (llm_judge, example 'q03') was estimated at $0.1500" in (captured.err)
        assert "budget: $0.4500 spent of $0.50 (90.0 %), 3 paid calls; stopped" in captured.out
        result = json.loads((tmp_path / "out" / "result.json").read_text())
        assert result["verdict"] == "error"
        assert result["budget"] == {
            "max_usd": 0.5,
            "spent_usd": pytest.approx(3 * CALL_USD),
            "calls": 3,
            "stopped": True,
        }
        markdown = (tmp_path / "out" / "report.md").read_text()
        assert "budget: `$0.4500` spent of `$0.50` (90.0 %)" in markdown  # $ is not math
        assert "budget: $0.4500 spent of $0.50" in (tmp_path / "out" / "report.html").read_text()
        assert len((tmp_path / "calls.log").read_text().splitlines()) == N

        # a larger budget pays for the 7 judgments left, and the system is not asked again
        _project(tmp_path, server.url, 5.0, module)
        assert main(["run"]) == 0
        assert len(server.requests) == N
        assert len((tmp_path / "calls.log").read_text().splitlines()) == N
        result = json.loads((tmp_path / "out" / "result.json").read_text())
        assert result["budget"]["calls"] == N - 3
        assert result["budget"]["spent_usd"] == pytest.approx((N - 3) * CALL_USD)
        assert result["budget"]["stopped"] is False
        summary = result["suites"][0]["metrics"][0]
        assert summary["components"]["judgments"] == N

        # and with everything cached, a run costs nothing
        assert main(["run"]) == 0
        assert len(server.requests) == N
        result = json.loads((tmp_path / "out" / "result.json").read_text())
        assert result["budget"]["spent_usd"] == 0.0


def test_the_budget_counts_calls_in_flight() -> None:
    budget = Budget(1.0)
    budget.reserve(0.4, "a")
    budget.reserve(0.4, "b")
    with pytest.raises(BudgetExceeded, match=r"spent \$0.0000 .* next call \(c\)"):
        budget.reserve(0.4, "c")  # 0.8 booked in flight: a third would pass 1.0
    budget.settle(0.4, 0.3)
    with pytest.raises(BudgetExceeded):  # once stopped, the run stays stopped
        budget.reserve(0.01, "d")
    assert (budget.calls, budget.spent) == (1, 0.3)


def test_check_warns_of_a_judge_without_prices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "goldens.jsonl").write_text('{"id": "a", "input": "q", "references": ["r"]}\n')
    text = CONFIG.format(module="m", url="http://127.0.0.1:9/v1", price=0, budget=1.0)
    (tmp_path / "goldgate.yaml").write_text(text, encoding="utf-8")
    assert main(["check"]) == 0
    assert "budget is set, but llm_judge has no prices" in capsys.readouterr().err
