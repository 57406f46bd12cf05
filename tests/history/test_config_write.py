"""set_gate_values edits goldgate.yaml in place, keeping comments and layout."""

from __future__ import annotations

from pathlib import Path

import pytest

from goldgate.errors import ConfigError, UsageError
from goldgate.model.config_loading import load_config
from goldgate.model.config_write import set_gate_values

CONFIG = """\
version: 1  # top
system: {predictions: "p/{suite}.jsonl"}
suites:
  a:
    goldens: a.jsonl
    metrics: {bleu: {}, chrf: {}, exact_match: {}}
    gate:
      bleu:
        max_drop: 1.0   # keep me
        max_drop_rel: 0.5
      chrf: {min: 30}
      exact_match:
        min: 10
"""


def test_values_are_set_where_they_are_written(tmp_path: Path) -> None:
    path = tmp_path / "goldgate.yaml"
    path.write_text(CONFIG)
    skipped = set_gate_values(
        path,
        {
            ("a", "bleu", "max_drop"): 2.25,
            ("a", "chrf", "max_drop"): 3.5,
            ("a", "exact_match", "max_drop"): 4.0,
        },
    )
    assert skipped == ["suites.a.gate.exact_match.max_drop"]
    text = path.read_text()
    assert "        max_drop: 2.25   # keep me\n        max_drop_rel: 0.5\n" in text
    assert "      chrf: {max_drop: 3.5, min: 30}\n" in text
    assert text.startswith("version: 1  # top\n")
    gate = load_config(path).suites["a"].gate
    assert (gate["bleu"].max_drop, gate["chrf"].max_drop, gate["exact_match"].max_drop) == (
        2.25,
        3.5,
        None,
    )


def test_an_invalid_result_is_refused_and_toml_is_not_edited(tmp_path: Path) -> None:
    path = tmp_path / "goldgate.yaml"
    path.write_text(CONFIG)
    with pytest.raises(ConfigError, match=r"suites\.a\.gate\.bleu\.max_drop"):
        set_gate_values(path, {("a", "bleu", "max_drop"): -1.0})
    assert path.read_text() == CONFIG
    with pytest.raises(UsageError, match=r"goldgate\.yaml only"):
        set_gate_values(tmp_path / "pyproject.toml", {})


def test_a_linked_configuration_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "goldgate.yaml").write_text(CONFIG)
    path = tmp_path / "goldgate.yaml"
    path.symlink_to(shared / "goldgate.yaml")
    set_gate_values(path, {("a", "bleu", "max_drop"): 2.25})
    assert path.is_symlink()
    assert "max_drop: 2.25   # keep me" in (shared / "goldgate.yaml").read_text()


def test_a_write_that_fails_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    def read_only(source: object, destination: object) -> None:
        raise OSError(errno.EROFS, "Read-only file system")

    path = tmp_path / "goldgate.yaml"
    path.write_text(CONFIG)
    monkeypatch.setattr("goldgate.io.atomic.os.replace", read_only)
    with pytest.raises(ConfigError, match="cannot write: Read-only file system; nothing changed"):
        set_gate_values(path, {("a", "bleu", "max_drop"): 2.25})
    assert path.read_text() == CONFIG
