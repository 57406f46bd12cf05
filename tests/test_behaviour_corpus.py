"""goldgate's observable behaviour, byte for byte, against the recorded corpus.

Every case in ``tests/corpus/cases.py`` runs real commands in a fresh directory; their exit
codes, normalised output and written files must equal ``tests/corpus/recorded/<case>/``. A
difference is a change of behaviour: when it is meant, record again
(``python -m tests.corpus.record CASE``) and let the diff be reviewed with the change. The
actual files of a failing case are kept in ``test-artifacts/corpus/<case>/``.
"""

from __future__ import annotations

import difflib

import pytest

from tests.corpus.cases import CASES, REQUIRES
from tests.corpus.harness import (
    PYTHON_FILE,
    RECORDED,
    REPO,
    python_version,
    recorded,
    run_case,
    write_recording,
)


@pytest.mark.parametrize("name", sorted(CASES))
def test_behaviour_equals_the_recorded_corpus(name: str) -> None:
    missing = REQUIRES[name]() if name in REQUIRES else None
    if missing:
        pytest.skip(missing)
    version = PYTHON_FILE.read_text().strip()
    if version != python_version():
        pytest.skip(f"the corpus was recorded on Python {version}")
    assert (RECORDED / name).is_dir(), f"case {name} was never recorded"
    actual = run_case(CASES[name], name)
    expected = recorded(name)
    if actual == expected:
        return
    write_recording(name, actual, into=REPO / "test-artifacts" / "corpus")
    lines: list[str] = []
    for relative in sorted(set(actual) | set(expected)):
        lines.extend(
            difflib.unified_diff(
                expected.get(relative, "").splitlines(keepends=True),
                actual.get(relative, "").splitlines(keepends=True),
                f"recorded/{name}/{relative}",
                f"actual/{name}/{relative}",
            )
        )
    pytest.fail(f"case {name} differs from its recording:\n{''.join(lines[:400])}")


def test_every_recording_has_a_case() -> None:
    stale = sorted(p.name for p in RECORDED.iterdir() if p.is_dir() and p.name not in CASES)
    assert not stale, f"recordings without a case: {stale}"
