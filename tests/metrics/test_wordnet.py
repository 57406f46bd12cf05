"""Where METEOR's WordNet comes from: a folder the user names is that folder or an error.

No WordNet is needed: the folders here hold empty files of the names WordNet's have, which is
all that locating one looks at.
"""

from __future__ import annotations

import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.errors import MetricError
from goldgate.io import inputs
from goldgate.metrics.meteor import wordnet


def _fake_wordnet(folder: Path) -> Path:
    folder.mkdir(parents=True)
    for name in wordnet._REQUIRED:
        (folder / name).write_bytes(b"")
    return folder


@pytest.fixture
def fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A WordNet found by looking (``$WNSEARCHDIR``), and no other one to find."""
    found = _fake_wordnet(tmp_path / "installed")

    def no_nltk_data() -> Iterator[Path]:
        yield tmp_path / "no-nltk-data"

    monkeypatch.setattr(wordnet, "_nltk_data_dirs", no_nltk_data)
    monkeypatch.delenv("GOLDGATE_WORDNET", raising=False)
    monkeypatch.setenv("WNSEARCHDIR", str(found))
    wordnet.load_wordnet.cache_clear()
    yield found
    wordnet.load_wordnet.cache_clear()


def test_without_a_named_folder_wordnet_is_looked_for(fallback: Path) -> None:
    assert wordnet.locate_wordnet() == fallback


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_a_wordnet_option_without_wordnet_is_an_error_naming_it(
    fallback: Path, tmp_path: Path, state: str
) -> None:
    folder = tmp_path / "my-wordnet"
    if state == "empty":
        folder.mkdir()
    problem = "does not exist" if state == "missing" else "holds no WordNet dictionary files"
    with pytest.raises(MetricError) as caught:
        wordnet.locate_wordnet(str(folder))
    message = str(caught.value)
    assert f"no WordNet dictionary files in {folder} (the metric's wordnet option)" in message
    assert problem in message
    assert str(fallback) not in message


@pytest.mark.parametrize("state", ["missing", "empty"])
def test_goldgate_wordnet_without_wordnet_is_an_error_naming_it(
    fallback: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, state: str
) -> None:
    folder = tmp_path / "env-wordnet"
    if state == "empty":
        folder.mkdir()
    monkeypatch.setenv("GOLDGATE_WORDNET", str(folder))
    with pytest.raises(MetricError, match=rf"in {folder} \(\$GOLDGATE_WORDNET\)"):
        wordnet.locate_wordnet()


def test_the_option_comes_before_goldgate_wordnet(
    fallback: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    chosen = _fake_wordnet(tmp_path / "chosen")
    monkeypatch.setenv("GOLDGATE_WORDNET", str(tmp_path / "missing"))
    assert wordnet.locate_wordnet(str(chosen)) == chosen


@pytest.mark.parametrize("packed", [False, True])
def test_a_wordnet_file_past_the_cap_is_refused(
    fallback: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, packed: bool
) -> None:
    folder = _fake_wordnet(tmp_path / "big")
    (folder / "data.noun").write_bytes(b"x" * 100)
    place = folder
    if packed:
        place = tmp_path / "wordnet.zip"
        with zipfile.ZipFile(place, "w", zipfile.ZIP_DEFLATED) as archive:
            for path in folder.iterdir():
                archive.write(path, f"wordnet/{path.name}")
    monkeypatch.setattr(inputs, "MAX_INPUT_BYTES", 50)
    monkeypatch.setattr(wordnet, "MAX_INPUT_BYTES", 50)
    with pytest.raises(MetricError, match=r"data\.noun.* is larger than 50 bytes"):
        wordnet.load_wordnet(str(place))


def test_score_with_a_missing_wordnet_option_exits_2_naming_it(
    fallback: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "rows.jsonl"
    data.write_text('{"candidate": "a cat", "references": ["a cat"]}\n')
    missing = tmp_path / "nowhere"
    code = main(["score", str(data), "--metric", f"meteor:wordnet={missing}"])
    assert code == 2
    assert f"no WordNet dictionary files in {missing}" in capsys.readouterr().err
