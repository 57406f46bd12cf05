"""The history page as HTML: structure, escaping, the policy that allows no script."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.history.page_project import HOSTILE, build


def test_the_page_holds_trends_blesses_regressions_and_flaky_examples(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    html = build(tmp_path, monkeypatch).read_text()
    # one suite, one metric; then the failure mode the diagnosis counted in some runs
    metrics = re.findall(
        r'<section class="trend" id="[^"]*" data-suite="qa" data-metric="([^"]*)"', html
    )
    assert metrics == ["exact_match", "category:number_change"]
    chart = html.split('data-metric="exact_match"', 1)[1].split("</section>", 1)[0]
    assert chart.count('<g class="hit run"') == 7
    assert chart.count('<g class="hit bless"') == 3
    assert html.count('data-kind="fail"') == 1  # the run at 30 of 40 (75 < min 80)
    assert html.count('class="band"') >= 1
    # hostile commit messages are text, never markup
    assert HOSTILE not in html and "<script" not in html.replace("script-src", "")
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;" in html
    # the policy allows no script and only the page's own style
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]*)"', html)
    assert policy is not None and "script-src &#39;none&#39;" in policy.group(1)
    assert "http" not in html.split("<body>", 1)[1].replace("http-equiv", "")
    # a band is cut at the metric's range: 97.5 + a difference's interval up to +15 would
    # say 112.5 on a scale that ends at 100
    bands = re.findall(r"score [\d.]+ \[(-?[\d.]+), (-?[\d.]+)\]", html)
    assert bands and all(0 <= float(low) <= float(high) <= 100 for low, high in bands), bands
    assert any(high == "100.00" for _, high in bands)
    flaky = html.split('<table class="flaky">', 1)[1]
    assert "<code>q036</code>" in flaky and "<code>q030</code>" in flaky
    # q037 changed only across commits (37 → 36 right, then 36 → 37 at the next commit)
    assert "<code>q037</code>" not in flaky
