"""``check`` takes a golden set file with the blessed bytes for the blessed set only when the
same reader reads it: renamed to another suffix, the same bytes are other records, or none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from goldgate.cli import main as cli
from goldgate.model.config_loading import load_config
from goldgate.model.goldens import load_goldens
from goldgate.runner import bless, check

N = 5000  # packed (PACK_MIN_EXAMPLES): the suites check settles from the file's hash

CONFIG = """\
version: 1
system: {{predictions: preds.jsonl}}
suites:
  s:
    goldens: {goldens}
    metrics: {{exact_match: {{}}}}
report: {{dir: out, formats: [json]}}
"""


def _configure(root: Path, goldens: str) -> None:
    (root / "goldgate.yaml").write_text(CONFIG.format(goldens=goldens))


@pytest.mark.parametrize("suffix", [".json", ".csv"])
def test_a_renamed_file_is_read_not_taken_for_the_blessed_set(
    suffix: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [{"id": f"q{i:05d}", "input": f"q {i}", "references": [f"a{i}"]} for i in range(N)]
    (tmp_path / "set.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "preds.jsonl").write_text(
        "".join(json.dumps({"id": r["id"], "output": r["references"][0]}) + "\n" for r in rows)
    )
    _configure(tmp_path, "set.jsonl")
    monkeypatch.chdir(tmp_path)
    bless(load_config(tmp_path / "goldgate.yaml"))
    (tmp_path / "set.jsonl").rename(tmp_path / f"set{suffix}")
    _configure(tmp_path, f"set{suffix}")
    found = check(load_config(tmp_path / "goldgate.yaml"))
    # unreadable as .json (no such format) or as CSV (no 'id' column): an error, not a match
    assert found[0].error is not None
    assert cli.main(["check"]) == 2


def _yaml_and_csv(n: int) -> str:
    """A file that is a YAML golden set of n records and a CSV one of n - 1 other records."""
    lines = ["[{meta: {q,id,input,reference,r: 1},id: a0,input: x,references: [y]},"]
    for i in range(1, n):
        end, extra = ("]", f",v{i}") if i == n - 1 else (",", "")
        lines.append(
            f"{{meta: {{q{i},r{i},s{i},t{i},u{i}{extra}}},id: a{i},input: x{i},references: [y{i}]}}"
            + end
        )
    return "\n".join(lines) + "\n"


def test_the_same_bytes_read_as_other_records_are_not_the_blessed_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = N + 1
    (tmp_path / "set.yaml").write_text(_yaml_and_csv(n))
    (tmp_path / "preds.jsonl").write_text(
        "".join(json.dumps({"id": f"a{i}", "output": "x"}) + "\n" for i in range(n))
    )
    _configure(tmp_path, "set.yaml")
    monkeypatch.chdir(tmp_path)
    bless(load_config(tmp_path / "goldgate.yaml"))
    blessed = load_goldens(tmp_path / "set.yaml", "s")
    (tmp_path / "set.yaml").rename(tmp_path / "set.csv")
    _configure(tmp_path, "set.csv")
    now = load_goldens(tmp_path / "set.csv", "s")
    assert now.content_hash != blessed.content_hash and now.records[0].id == "r1"
    found = check(load_config(tmp_path / "goldgate.yaml"))
    assert found[0].error is not None or found[0].note is not None
