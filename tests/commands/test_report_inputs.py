"""``goldgate report`` on what is not quite a saved result: a baseline given instead, an
examples file that does not hold the result's rows, or one that inflates without end."""

from __future__ import annotations

import gzip
import resource
import zlib
from pathlib import Path

import pytest

from goldgate.cli.main import main
from goldgate.model import examples_file as examples_file_module

RESULT = "goldgate-report/result.json"
EXAMPLES = Path("goldgate-report") / "examples.jsonl.gz"


@pytest.fixture
def saved(scaffold: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A scaffolded project with a run's result saved (46 examples in two suites)."""
    assert main(["run"]) == 0
    capsys.readouterr()
    return scaffold


def test_a_baseline_given_as_the_result_says_what_to_pass(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bless", "-q"]) == 0
    capsys.readouterr()
    assert main(["report", "goldgate.baseline.json"]) == 2
    err = capsys.readouterr().err
    # was: "not a goldgate result: created_at: Field required"
    assert "goldgate.baseline.json: this is a goldgate baseline, not a result" in err
    assert "result.json" in err and "created_at" not in err


@pytest.mark.parametrize("cut", ["a row fewer", "a row more"])
def test_an_examples_file_of_another_row_count_is_an_input_error(
    saved: Path, capsys: pytest.CaptureFixture[str], cut: str
) -> None:
    lines = gzip.decompress(EXAMPLES.read_bytes()).splitlines(keepends=True)
    assert len(lines) == 46
    lines = lines[:-1] if cut == "a row fewer" else [*lines, lines[-1]]
    EXAMPLES.write_bytes(gzip.compress(b"".join(lines)))
    # was: exit 0, a report of 45 (or 47) examples where the result says 46
    assert main(["report", RESULT]) == 2
    err = capsys.readouterr().err
    assert str(EXAMPLES) in err and "suite 'translate'" in err
    if cut == "a row fewer":
        assert "15 example rows for suite 'translate', where the result says it has 16" in err
    else:
        assert ":47: more example rows for suite 'translate' than the 16 examples" in err


def test_an_examples_file_that_inflates_without_end_is_refused_before_it_is_held(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # one line of 512 MiB of spaces in ~0.5 MB of gzip: read whole by readline before
    deflater = zlib.compressobj(9, zlib.DEFLATED, 31)  # a gzip stream
    chunk = b" " * (1 << 20)
    bomb = b"".join(deflater.compress(chunk) for _ in range(512)) + deflater.flush()
    EXAMPLES.write_bytes(bomb)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert main(["report", RESULT]) == 2
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 64 + examples_file_module.MAX_EXAMPLE_ROW_BYTES / (1 << 20)
    err = capsys.readouterr().err
    assert f"{EXAMPLES}:1: the examples inflate past what a row may take" in err


def test_an_examples_file_that_is_not_a_regular_file_is_refused(
    saved: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    EXAMPLES.unlink()
    os.mkfifo(EXAMPLES)  # opening it to read would wait for a writer for ever
    assert main(["report", RESULT]) == 2
    assert "a FIFO" in capsys.readouterr().err
