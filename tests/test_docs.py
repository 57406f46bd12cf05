"""Every example in the README and the docs runs, and the site builds with every link whole.

The conventions are in ``tests/docs_examples.py`` (and, for writers, ``docs/contributing/docs.md``).
The site is built once per test session (``mkdocs build --strict``, shared by the xdist
workers through a lock) and read by the tests below.
"""

from __future__ import annotations

import fcntl
import html
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import unquote, urlsplit

import pytest
import yaml

from tests.docs_examples import (
    MINIMAL_CONFIG,
    ROOT,
    Block,
    all_blocks,
    blocks,
    commands,
    deep_merge,
    matches,
    normalise,
    pages,
)

BIN = Path(sys.executable).parent
EXAMPLE_PROJECT = ("goldgate.yaml", "goldens", "goldgate.baseline.json")
SHELLS = ("bash", "sh", "shell", "console")


def _id(block: Block) -> str:
    return block.where


# -- configuration examples ---------------------------------------------------------------

CONFIGS = [b for b in all_blocks() if b.lang in ("yaml", "yml") and b.title.startswith("goldgate")]


def test_the_pages_hold_configuration_examples() -> None:
    titles = {b.title for b in CONFIGS}
    assert {"goldgate.yaml", "goldgate.yaml (excerpt)"} <= titles


def _config_text(block: Block) -> str:
    """The configuration a block stands for: itself, or an excerpt merged into the minimal one."""
    assert block.title in ("goldgate.yaml", "goldgate.yaml (excerpt)"), (
        f'{block.where}: a goldgate title is "goldgate.yaml" or "goldgate.yaml (excerpt)"'
    )
    data = yaml.safe_load(block.body)
    assert isinstance(data, dict), f"{block.where}: not a mapping"
    if block.title.endswith("(excerpt)"):
        data = deep_merge(MINIMAL_CONFIG, data)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


#: Validates a configuration as ``goldgate check`` does before it reads any golden set.
_VALIDATE = (
    "import sys, goldgate, goldgate.errors\n"
    "try:\n    goldgate.load_config(sys.argv[1])\n"
    "except goldgate.errors.GoldgateError as exc:\n    print(exc)\n    sys.exit(1)\n"
)


def test_an_invalid_configuration_example_would_fail(tmp_path: Path) -> None:
    """The check above can fail: a misspelt key in an excerpt is refused."""
    import goldgate

    data = deep_merge(MINIMAL_CONFIG, {"suites": {"qa": {"gate": {"exact_macth": {"min": 1}}}}})
    path = tmp_path / "goldgate.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(goldgate.errors.GoldgateError):  # type: ignore[attr-defined]
        goldgate.load_config(path)


# -- goldgate command lines in shell blocks --------------------------------------------------


def _goldgate_lines(block: Block) -> Iterator[tuple[str, list[str]]]:
    """Each ``goldgate ...`` invocation of a shell block, as argv after ``goldgate``."""
    for raw in block.body.splitlines():
        line = raw[2:] if block.lang == "console" and raw.startswith("$ ") else raw
        if block.lang == "console" and not raw.startswith("$ "):
            continue
        line = re.split(r"\s+#", line, maxsplit=1)[0]
        for part in re.split(r"&&|\|\||;|\|", line):
            try:
                words = shlex.split(part)
            except ValueError:
                continue
            for index, word in enumerate(words):
                if word == "goldgate" or word.endswith("/goldgate") or word == "goldgate.exe":
                    argv = []
                    for arg in words[index + 1 :]:
                        if arg.startswith((">", "<", "2>")):
                            break
                        argv.append(arg)
                    yield part.strip(), argv
                    break


SHELL_BLOCKS = [b for b in all_blocks() if b.lang in SHELLS]


@pytest.mark.parametrize("block", SHELL_BLOCKS, ids=_id)
def test_goldgate_command_lines_parse(block: Block) -> None:
    """Every command and option a shell block names exists, run or not."""
    from goldgate.cli.main import build_parser

    for line, argv in _goldgate_lines(block):
        if not argv or argv[0] in ("-m",):
            continue
        try:
            build_parser().parse_args(argv)
        except SystemExit as exc:
            assert exc.code == 0, f"{block.where}: `{line}` is not a valid goldgate command"


# -- console and python blocks, run --------------------------------------------------------


def _runnable(page: Path) -> list[Block]:
    """The blocks of a page that run: console, python, and configurations (validated where
    they stand, in the folder the commands before them left, so a metric module they name
    that an earlier block wrote is found)."""
    return [
        b
        for b in blocks(page)
        if b.no_run is None
        and (b.lang in ("console", "python") or (b.lang in ("yaml", "yml") and b.title))
        and (b.lang != "yaml" or b.title.startswith("goldgate"))
    ]


RUN_PAGES = [page for page in pages() if _runnable(page)]


def _environment(home: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "GOLDGATE_", "PYTEST_", "COV_")) and k not in ("CI",)
    }
    env.update(
        PATH=f"{BIN}{os.pathsep}{env.get('PATH', '')}",
        HOME=str(home),
        COLUMNS="100",
        NO_COLOR="1",
        LC_ALL="C.UTF-8",
        PYTHONDONTWRITEBYTECODE="1",
    )
    return env


def _copy_example(target: Path) -> Path:
    project = target / "project"
    project.mkdir()
    for name in EXAMPLE_PROJECT:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, project / name)
        else:
            shutil.copy2(source, project / name)
    return project


_MARK = "\x00@@goldgate-docs@@"


@pytest.mark.parametrize("page", RUN_PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_page_examples_run(page: Path, tmp_path: Path) -> None:
    """A page's console, python and configuration blocks, in order, in one shell in a copy of
    the example project."""
    project = _copy_example(tmp_path)
    steps: list[tuple[str, Any]] = []
    script = ["set +e"]
    mark = f"__rc=$?; printf '\\000{_MARK[1:]}%d\\n' $__rc; (exit $__rc)"
    for block in _runnable(page):
        if block.lang in ("yaml", "yml"):
            config = tmp_path / f"config-{block.line}.yaml"
            config.write_text(_config_text(block), encoding="utf-8")
            steps.append(("config", block))
            here = "./.goldgate-docs-example.yaml"
            script.append(
                f"cp {shlex.quote(str(config))} {here} && "
                f"{shlex.quote(str(BIN / 'python'))} -c {shlex.quote(_VALIDATE)} {here} 2>&1; "
                f"__v=$?; rm -f {here}; (exit $__v)"
            )
            script.append(mark)
        elif block.lang == "python":
            code = tmp_path / f"block-{block.line}.py"
            code.write_text(block.body, encoding="utf-8")
            steps.append(("python", block))
            script.append(f"{shlex.quote(str(BIN / 'python'))} {shlex.quote(str(code))} 2>&1")
            script.append(mark)
        else:
            for command in commands(block):
                steps.append(("console", command))
                script.append(f"{{ {command.command}\n}} 2>&1 </dev/null")
                script.append(mark)
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=project,
        env=_environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    outputs = done.stdout.split(_MARK)
    assert len(outputs) == len(steps) + 1, done.stdout[-2000:] + done.stderr[-2000:]
    previous = outputs[0]
    problems = []
    for (kind, step), chunk in zip(steps, outputs[1:], strict=True):
        code_text, _, _ = chunk.partition("\n")
        output = previous
        previous = chunk.split("\n", 1)[1] if "\n" in chunk else ""
        code = int(code_text)
        actual = normalise(output.replace(str(tmp_path / "project"), "/path/to/project"))
        if kind in ("python", "config"):
            if code != 0:
                problems.append(f"{step.where}: {kind} block failed ({code}):\n{output}")
            continue
        where = f"{step.block.page.relative_to(ROOT)}:{step.line}"
        expected = normalise(step.expected)
        if not expected.strip():
            if code != 0:
                problems.append(f"{where}: `{step.command}` exited {code}:\n{output}")
        elif not matches(expected, actual):
            problems.append(
                f"{where}: `{step.command}` printed (normalised):\n{actual}\n"
                f"--- the page shows (normalised):\n{expected}"
            )
    assert not problems, "\n\n".join(problems)


def test_console_comparison_can_fail() -> None:
    shown = "goldgate: PASS ...\n...\nresult: /…/result.json"
    assert matches(shown, "goldgate: PASS (6)\nx\ny\nresult: /…/result.json")
    assert not matches(shown, "goldgate: REGRESSED (6)\nresult: /…/result.json")
    assert not matches("goldgate: PASS", "goldgate: REGRESSED")
    progress = "qa: callable: 3/3 in 0.1s\nresult: /tmp/x/y/result.json"
    assert normalise(progress) == "result: /…/result.json"


# -- the built site ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``mkdocs build --strict`` once for every xdist worker (the first builds, others wait)."""
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("mkdocs is not installed (the docs extra is part of the test extra)")
        pytest.skip("mkdocs is not installed: pip install -e '.[docs]'")
    # xdist workers share their session's parent folder; a single process has its own
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    target = shared / "docs-site"
    with (shared / "docs-site.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        status = shared / "docs-site.status"
        if not status.exists():
            done = subprocess.run(
                [str(BIN / "mkdocs"), "build", "--strict", "--quiet", "-d", str(target)],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                env={**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"},
            )
            status.write_text(f"{done.returncode}\n{done.stdout}\n{done.stderr}", encoding="utf-8")
        code, _, log = status.read_text(encoding="utf-8").partition("\n")
    assert code == "0", f"mkdocs build --strict failed:\n{log[-5000:]}"
    return target


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("docs_hook", ROOT / "docs/hooks/reference.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _text(page: Path) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8")))


def test_every_configuration_key_is_in_the_reference(site: Path) -> None:
    keys = _hook().config_keys()
    assert {"version", "suites.<name>.gate.<name>.max_drop", "engine.dask.address"} <= set(keys)
    text = _text(site / "reference/configuration.html")
    missing = [key for key in keys if key not in text]
    assert not missing
    # and every key says what it means (a Field without a description fails here)
    page = (site / "reference/configuration.html").read_text(encoding="utf-8")
    rows = [
        re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
        for row in re.findall(r"<tr>(.*?)</tr>", page, re.S)
    ]
    silent = [
        html.unescape(re.sub(r"<[^>]+>", "", cells[0]))
        for cells in rows
        if len(cells) == 4 and not re.sub(r"<[^>]+>", "", cells[3]).strip()
    ]
    assert not silent, f"configuration keys without a description: {silent}"


def test_every_command_and_option_is_in_the_reference(site: Path) -> None:
    options = _hook().cli_options()
    assert {"run", "bless", "check", "score", "calibrate"} <= set(options)
    text = _text(site / "reference/cli.html")
    missing = [
        f"{command} {option}"
        for command, names in options.items()
        for option in [f"goldgate {command}", *names]
        if option not in text
    ]
    assert not missing


def test_every_metric_and_option_is_in_the_reference(site: Path) -> None:
    from goldgate.metrics.registry import _BUILTINS, _load_object

    text = _text(site / "reference/metrics.html")
    missing = []
    for name, target in _BUILTINS.items():
        if f"{name}" not in text:
            missing.append(name)
        for option in _load_object(target, name).Options.option_names():
            if f"{option}" not in text:
                missing.append(f"{name}.{option}")
    assert not missing
    assert "lower is better" in text  # TER's direction


def test_every_metric_names_its_peer_and_the_test_that_holds_it() -> None:
    from goldgate.metrics.registry import builtin_metric_names

    peers = _hook().PEERS
    assert set(peers) == set(builtin_metric_names())
    for name, (_, test, marker) in peers.items():
        source = (ROOT / test).read_text(encoding="utf-8")
        assert marker in source, f"{name}: {test} does not mention {marker}"


def test_the_result_and_baseline_formats_are_in_the_reference(site: Path) -> None:
    from goldgate.cli.commands.schema import schema_of

    for which in ("result", "baseline"):
        schema = schema_of(which)
        text = _text(site / f"reference/{which}.html")
        for name, spec in [("top", schema), *schema.get("$defs", {}).items()]:
            for key in spec.get("properties", {}):
                assert key in text, f"{which}: {name}.{key}"


def test_the_docs_quote_the_code_s_numbers(site: Path) -> None:
    """The automatic pool's threshold comes from the constant, as in the help texts."""
    from goldgate.metrics import PARALLEL_MIN_EXAMPLES

    quoted = f"{PARALLEL_MIN_EXAMPLES:,}"
    text = " ".join(_text(site / "how-to/large-sets.html").split())
    assert f"once a suite has {quoted} examples or more" in text
    assert f"on by default from {quoted} examples" in " ".join(
        _text(site / "benchmarks.html").split()
    )
    for page in pages():
        source = page.read_text(encoding="utf-8")
        assert f"{quoted} examples" not in source, f"{page}: write {{{{ PARALLEL_MIN_EXAMPLES }}}}"


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.assets: list[str] = []  # what the page loads: scripts, stylesheets, images

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        for key in ("id", "name"):
            if values.get(key):
                self.ids.add(str(values[key]))
        for key in ("href", "src"):
            if tag in ("a", "link", "img", "script") and values.get(key):
                self.links.append(str(values[key]))
        loaded = {"script": "src", "img": "src", "link": "href"}.get(tag)
        if loaded and values.get(loaded) and (tag != "link" or values.get("rel") != "canonical"):
            self.assets.append(str(values[loaded]))


def _parse(page: Path) -> _Links:
    parser = _Links()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


def test_internal_links_and_anchors_resolve(site: Path) -> None:
    # 404.html links from the site's root (it is served for any address); the others relative
    parsed = {page: _parse(page) for page in site.rglob("*.html") if page.name != "404.html"}
    broken = []
    for page, links in parsed.items():
        for link in links.links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or link.startswith(("mailto:", "javascript:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
                continue
            if parts.fragment and target.suffix == ".html":
                ids = parsed[target].ids if target in parsed else _parse(target).ids
                if unquote(parts.fragment) not in ids:
                    broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken[:50])


def test_search_works_offline(site: Path) -> None:
    """The offline plugin ships the index as a script (no fetch, file:// works), and no page
    loads anything from the network (no web fonts, no CDN)."""
    index = site / "search" / "search_index.js"
    assert index.exists()
    content = index.read_text(encoding="utf-8")
    assert "max_drop" in content and "embedding_similarity" in content
    for page in site.rglob("*.html"):
        external = [a for a in _parse(page).assets if a.startswith(("http://", "https://", "//"))]
        assert not external, f"{page.relative_to(site)} loads {external}"


def test_architecture_is_on_the_site(site: Path) -> None:
    text = _text(site / "explanation/architecture.html")
    assert "Seams: where a new one goes" in text


def test_search_finds_pages_from_the_file_system_with_no_network(site: Path) -> None:
    """Opened from disk (file://), the search box finds a page, and nothing is fetched from
    the network on the way (the worker's shim is vendored, the index is a script)."""
    from tests.report.browser import ARGS, CHROMIUM, require_browser

    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            requests: list[str] = []
            page.on("request", lambda request: requests.append(request.url))
            page.goto((site / "how-to" / "large-sets.html").as_uri())
            page.keyboard.press("/")
            page.locator("input.md-search__input").press_sequentially("max_drift", delay=20)
            page.locator(".md-search-result__item").first.wait_for(timeout=20_000)
            titles = page.locator(".md-search-result__article h1").all_inner_texts()
        finally:
            browser.close()
    assert "Catch slow drift" in titles
    assert [url for url in requests if not url.startswith("file:")] == []


def test_the_readme_links_into_the_docs(site: Path) -> None:
    """README.md is read on GitHub, not on the site: its relative links name files of the
    repository, and an anchor into a docs page is one the built page has."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    assert any(link.startswith("docs/") for link in links)
    broken = []
    for link in links:
        if urlsplit(link).scheme:
            continue
        path, _, fragment = link.partition("#")
        if not (ROOT / path).exists():
            broken.append(link)
        elif fragment and path.startswith("docs/") and path.endswith(".md"):
            page = site / (path.removeprefix("docs/").removesuffix(".md") + ".html")
            if fragment not in _parse(page).ids:
                broken.append(link)
    assert not broken


def test_no_example_installs_or_uses_what_does_not_exist_yet() -> None:
    """Until goldgate's first release there is no PyPI package and no ``v1`` tag: an example
    that runs ``pip install goldgate`` or ``uses: OWNER/goldgate@v1`` fails as written (once
    the release workflow has published 1.0, this test goes)."""
    wrong = []
    for block in all_blocks():
        for number, line in enumerate(block.body.splitlines(), start=block.line + 1):
            code = line.split("#", 1)[0]
            if re.search(r"uses:\s*\S+/goldgate@v\d+\b", code) or re.search(
                r"pip install\s+(-\S+\s+)*['\"]?goldgate(\[[^\]]*\])?['\"]?(?!\s*@)(\s|$)", code
            ):
                wrong.append(f"{block.page.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not wrong, "\n".join(wrong)


def test_every_input_and_output_of_the_action_is_in_the_reference(site: Path) -> None:
    document = _hook().action()
    page = _parse(site / "reference/action.html")
    for name in document["inputs"]:
        assert f"input-{name}" in page.ids, name
    for name in document["outputs"]:
        assert f"output-{name}" in page.ids, name
    assert {"github-token", "history-branch", "report-url"} <= set(document["inputs"])
