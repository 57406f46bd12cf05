"""The history site (``goldgate history --site``) in headless Chromium, from ``file://``.

Every page opens without an error or a console message and loads nothing; each suite's
charts render; every link on every page leads to a page of the site, and following one works.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest

from goldgate.cli.main import main
from tests.report.browser import open_report

GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]


def build_site(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scaffolded project with two suites in git: a bless, runs, a regression; its site."""
    monkeypatch.chdir(root)
    monkeypatch.setenv("CI", "true")
    for name in ("GITHUB_ACTIONS", "GITLAB_CI"):
        monkeypatch.delenv(name, raising=False)
    assert main(["init"]) == 0
    subprocess.run([*GIT, "init", "-q", "-b", "main"], check=True)
    subprocess.run([*GIT, "add", "-A"], check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "start"], check=True)
    assert main(["bless", "-q"]) == 0
    subprocess.run([*GIT, "add", "-A"], check=True)
    subprocess.run([*GIT, "commit", "-q", "-m", "bless <b>qa</b> & translate"], check=True)
    assert main(["run", "-q"]) == 0
    predictions = root / "predictions" / "qa.jsonl"
    good = predictions.read_text(encoding="utf-8")
    rows = [json.loads(line) for line in good.splitlines() if line.strip()]
    for row in rows[:10]:
        row["output"] = "wrong"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    assert main(["run", "-q"]) == 1
    predictions.write_text(good, encoding="utf-8")
    assert main(["run", "-q"]) == 0
    assert main(["history", "--site", "site", "--last", "0"]) == 0
    return root / "site"


def test_the_site_opens_renders_and_every_link_works(
    browser: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = build_site(tmp_path, monkeypatch)
    names = sorted(p.name for p in site.iterdir())
    assert names == ["index.html", "suite-qa.html", "suite-translate.html"]
    linked: set[str] = set()
    for name in names:
        watched = open_report(browser, site / name)
        page = watched.page
        assert watched.errors == [] and watched.console == [] and watched.dialogs == []
        assert watched.foreign_requests() == []
        assert page.locator("script").count() == 0
        hrefs = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
        for href in hrefs:
            url = urlsplit(href)
            assert url.scheme == "file", href
            target = Path(unquote(url.path))
            assert target.parent == site.resolve() and target.is_file(), href
            linked.add(target.name)
        if name == "index.html":
            assert page.locator("table.suites tbody tr").count() == 2
            continue
        # the suite's metrics (the failure modes the diagnosis counted come after them)
        charts = page.locator('section.trend:not([data-metric^="category:"]) svg.trend')
        assert charts.count() == 2
        box = charts.first.bounding_box()
        assert box is not None and box["width"] > 600 and box["height"] > 150
        assert page.locator("g.hit.run").count() >= 2
        assert page.locator("g.hit.bless").count() >= 1
        assert page.locator("section.blesses tbody tr").count() == 1
        # the commit message is text, never markup
        assert "bless <b>qa</b> & translate" in (page.text_content("section.blesses") or "")
        regressions = page.locator("section.regressions tbody tr").count()
        assert regressions == (2 if name == "suite-qa.html" else 0)
        page.context.close()
    assert linked == set(names)
    # following a link: index → qa → back to the index
    watched = open_report(browser, site / "index.html")
    watched.page.click("text=qa")
    assert watched.page.url.endswith("/suite-qa.html")
    assert watched.page.text_content("h1") == "goldgate history: qa"
    watched.page.click("text=all suites")
    assert watched.page.url.endswith("/index.html")
    assert watched.errors == [] and watched.console == []
