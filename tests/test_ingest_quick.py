"""The quick ways of reading JSON Lines give what the careful ways give, or the same error.

Golden sets and predictions are parsed a batch of lines per ``json`` call, without a hook on
every object, and usual records are built on a quick path; content hashes and record digests
are computed in one pass from pieces. Each is compared here with a reference: the careful
parse of every line (a hook sees every object's keys), ``validated_records``, and the
encoders' own canonical JSON.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from goldgate.errors import BaselineError, GoldenSetError, GoldgateError, InputError
from goldgate.io import text_inputs
from goldgate.io.inputs import free_of_duplicates, loads_json, loads_json_carefully
from goldgate.io.text_inputs import json_lines, read_utf8
from goldgate.model import golden_records, goldens
from goldgate.model.baseline import SuiteBaseline
from goldgate.model.baseline_verify import verify_suite
from goldgate.model.golden_formats import validated_records
from goldgate.model.golden_hashing import content_hash, record_digest
from goldgate.model.golden_records import GoldenRecord
from goldgate.model.goldens import GoldenSet, load_goldens, loaded_digests

# -- references: how golden sets were read before the quick ways ------------------------------


def careful_json_lines(text: str, label: str, error: type[GoldgateError]) -> Iterator[Any]:
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            yield number, loads_json_carefully(line, f"{label}:{number}", error)


def reference_content_hash(records: list[GoldenRecord]) -> str:
    encoder = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    canonical = encoder.encode(
        [
            {
                "id": r.id,
                "input": r.input,
                "references": list(r.references),
                "tags": sorted(r.tags),
            }
            for r in sorted(records, key=lambda r: r.id)
        ]
    )
    return "sha256:" + hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def reference_digest(record: GoldenRecord) -> str:
    encoder = json.JSONEncoder(
        sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str
    )
    canonical = encoder.encode([record.input, list(record.references), sorted(record.tags)])
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()[:16]


def _summary(records: Any) -> list[tuple[Any, ...]]:
    return [(r.id, r.input, r.references, r.tags, dict(r.meta), r.line) for r in records]


def reference_outcome(path: Path) -> tuple[Any, ...]:
    try:
        text = read_utf8(path, GoldenSetError, what="golden set")
        rows = (
            (line, index, data)
            for index, (line, data) in enumerate(
                careful_json_lines(text, str(path), GoldenSetError), start=1
            )
        )
        records, seen = validated_records(rows, path)
        if not records:
            raise GoldenSetError(f"{path}: the golden set is empty")
        try:
            digest = reference_content_hash(records)
        except UnicodeEncodeError:
            raise goldens._surrogate_error(tuple(records), path, seen) from None
    except GoldenSetError as exc:
        return ("error", str(exc))
    return ("ok", _summary(records), digest, [reference_digest(r) for r in records])


def outcome(path: Path) -> tuple[Any, ...]:
    try:
        golden = load_goldens(path, "qa")
    except GoldenSetError as exc:
        return ("error", str(exc))
    digests = golden.digests()
    return (
        "ok",
        _summary(golden.records),
        golden.content_hash,
        [digests[record.id] for record in golden.records],
    )


# -- what goes into a line ---------------------------------------------------------------------

# Text with everything that matters to the counting: colons, braces, quotes, backslashes,
# line separators JSON strings may hold raw, and non-ASCII (written raw or escaped).
_text = st.text(alphabet=st.sampled_from(list('ab :{}[]",\\\t\r\n\u2028\x0b\xa0é€😀')), max_size=8)
_plain = st.text(alphabet=st.sampled_from(list("abc xyz:é")), min_size=1, max_size=6)
_scalar = st.one_of(st.none(), st.booleans(), st.integers(-5, 10**20), _text)
_json = st.recursive(
    _scalar,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=6,
)
_ids = st.one_of(_plain, st.integers(-3, 10**6), st.sampled_from(["", " a", "a ", "dup"]))


@st.composite
def record(draw: st.DrawFn) -> dict[str, Any]:
    """Usual records, and records with every kind of field that is wrong, odd or optional."""
    if draw(st.booleans()):
        usual: dict[str, Any] = {
            "id": draw(_plain),
            "input": draw(st.one_of(_plain, _text)),
            "references": draw(st.lists(st.one_of(_plain, _text), min_size=1, max_size=3)),
        }
        if draw(st.booleans()):
            usual["tags"] = draw(st.lists(st.sampled_from(["a", " a", "b", "a:b"]), max_size=3))
        return usual
    data: dict[str, Any] = {}
    if draw(st.integers(0, 20)):
        data["id"] = draw(_ids)
    if draw(st.integers(0, 20)):
        data["input"] = draw(st.one_of(_plain, _text, _json))
    choice = draw(st.integers(0, 12))
    if choice <= 8:
        data["references"] = draw(st.lists(_plain, min_size=1, max_size=3))
    elif choice == 9:
        data["references"] = draw(st.one_of(st.lists(_text, max_size=2), _text, _json))
    elif choice == 10:
        data["reference"] = draw(st.one_of(_plain, _json))
    if draw(st.booleans()):
        data["tags"] = draw(
            st.one_of(
                st.lists(st.sampled_from(["a", " a", "b", "", "a:b"]), max_size=3),
                _plain,
                _json,
            )
        )
    if not draw(st.integers(0, 5)):
        data["meta"] = draw(_json)
    if not draw(st.integers(0, 30)):
        data[draw(_plain)] = 1
    return data


@st.composite
def line(draw: st.DrawFn) -> str:
    kind = draw(st.integers(0, 30))
    if kind == 0:
        return draw(
            st.sampled_from(
                [
                    "",
                    "   ",
                    "\xa0",
                    "[1]",
                    "5",
                    '"x"',
                    "null",
                    "{",
                    "{}",
                    "{} {}",
                    "{},{}",
                    '{"id": "a"} x',
                    '{"id": "a", "id": "b"}',
                    '{"a": "\\u003a", "a": "\\u003a"}',
                    '{"id": "s", "input": "\\ud800", "references": ["r"]}',
                    '{"id": "n", "input": 1' + "0" * 5000 + ', "references": ["r"]}',
                    '{"id": "deep", "input": ' + "[" * 150 + "]" * 150 + ', "references": ["r"]}',
                ]
            )
        )
    data = draw(record())
    ensure_ascii = draw(st.booleans())
    separators = draw(st.sampled_from([(", ", ": "), (",", ":"), (" ,", " : ")]))
    text = json.dumps(data, ensure_ascii=ensure_ascii, separators=separators)
    if kind == 1 and data:
        # the same key again, first or last, at the top or in a nested object
        key = draw(st.sampled_from([*data, "meta"]))
        value = json.dumps(draw(_json))
        text = "{" + json.dumps(key) + ":" + value + "," + text[1:] if len(text) > 2 else text
    elif kind == 2:
        text = text[:-1] + ', "meta": {"k": 1, "k": 2}}'
    elif kind == 3:
        text = " " + text + "\t"
    elif kind == 4:
        text = text + "\r"
    return text


@st.composite
def jsonl(draw: st.DrawFn) -> str:
    lines = draw(st.lists(line(), min_size=0, max_size=12))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n", "\r\n", "\n\n"]))


_SETTINGS = settings(
    max_examples=400,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


@_SETTINGS
@given(
    text=jsonl(),
    batch=st.sampled_from([1, 7, 40, 1 << 20]),
    block=st.sampled_from([1, 2, 4096]),
)
def test_a_golden_set_reads_as_the_careful_way_reads_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, batch: int, block: int
) -> None:
    # records are hashed and packed a block at a time as they are read
    monkeypatch.setattr(text_inputs, "_BATCH_CHARS", batch)
    monkeypatch.setattr(golden_records, "_BLOCK", block)
    path = tmp_path / "qa.jsonl"
    path.write_text(text, "utf-8", newline="")
    assert outcome(path) == reference_outcome(path)


@_SETTINGS
@given(text=jsonl(), batch=st.sampled_from([1, 7, 40, 1 << 20]))
def test_json_lines_give_what_each_line_gives(
    monkeypatch: pytest.MonkeyPatch, text: str, batch: int
) -> None:
    monkeypatch.setattr(text_inputs, "_BATCH_CHARS", batch)

    def run(read: Any) -> Any:
        try:
            return list(read(text, "p.jsonl", InputError))
        except InputError as exc:
            return str(exc)

    assert run(json_lines) == run(careful_json_lines)


@_SETTINGS
@given(text=st.one_of(jsonl(), st.builds(json.dumps, _json)))
def test_loads_json_gives_what_the_careful_parse_gives(text: str) -> None:
    def run(parse: Any) -> Any:
        try:
            return ("ok", parse(text, "f.json", InputError))
        except InputError as exc:
            return ("error", str(exc))

    fast, careful = run(loads_json), run(loads_json_carefully)
    if fast[0] == "ok" and careful[0] == "ok":
        # NaN is not equal to itself: compare the JSON the values write
        assert json.dumps(fast[1]) == json.dumps(careful[1])
    else:
        assert fast == careful


@_SETTINGS
@given(value=_json)
def test_no_repeated_key_is_ever_passed_as_free(value: Any) -> None:
    text = json.dumps(value)
    assert free_of_duplicates(text, json.loads(text))  # written by json: no key repeats
    # the same object with a key repeated, alone or nested, is never taken as free
    if isinstance(value, dict) and value:
        doubled = '{"k":1,"k":2,' + text[1:]
        for text in (doubled, f"[{doubled}]", f'{{"x": {doubled}, "y": ":"}}'):
            assert not free_of_duplicates(text, json.loads(text))


@pytest.mark.parametrize(
    "bad",
    [
        '{"id": "x", "input": "a", "references": ["r"], "id": "y"}',
        '{"id": "x", "input": "a:b", "references": ["r:s"], "input": "c"}',
        '{"id": "x", "input": "\\u003a", "references": ["r"], "input": "\\u003a"}',
        '{"id": "x", "input": {"q": "a", "q": "b"}, "references": ["r"]}',
        '{"id": "x", "input": [{"q": 1, "q": 1}], "references": ["r"]}',
        '{"id": "x", "input": "a", "references": ["r"], "meta": {"a": {"b": 1, "b": 1}}}',
    ],
)
def test_a_repeated_key_anywhere_is_refused_with_its_line(tmp_path: Path, bad: str) -> None:
    usual = [
        json.dumps({"id": f"q{i}", "input": "a question", "references": ["r"], "tags": ["t"]})
        for i in range(500)
    ]
    path = tmp_path / "qa.jsonl"
    path.write_text("\n".join([*usual[:300], bad, *usual[300:]]) + "\n", "utf-8")
    with pytest.raises(GoldenSetError) as info:
        load_goldens(path, "qa")
    assert str(info.value).startswith(f"{path}:301: key ")
    assert "appears twice in one object" in str(info.value)


def test_records_of_the_quick_path_are_golden_records(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        '{"id": "a", "input": "x", "references": ["r"], "tags": [" t", "t", "u"]}\n', "utf-8"
    )
    (record,) = load_goldens(path, "qa").records
    assert type(record) is GoldenRecord
    assert record == GoldenRecord("a", "x", ("r",), ("t", "u"), line=1)
    with pytest.raises(AttributeError):
        record.id = "b"  # type: ignore[misc]


@given(
    records=st.lists(
        st.builds(
            GoldenRecord,
            id=_plain,
            input=st.one_of(_text, _json),
            references=st.lists(_text, min_size=1, max_size=3).map(tuple),
            tags=st.lists(_plain, max_size=3).map(tuple),
        ),
        max_size=8,
        unique_by=lambda r: r.id,
    )
)
@settings(max_examples=300, deadline=None)
def test_hashes_equal_the_encoders_canonical_json(records: list[GoldenRecord]) -> None:
    assert content_hash(records) == reference_content_hash(records)
    golden = GoldenSet("qa", Path("qa.jsonl"), tuple(records), content_hash(records))
    digests = golden.digests()
    for one in records:
        assert (
            digests[one.id]
            == reference_digest(one)
            == record_digest(one.input, one.references, one.tags)
        )
    assert golden.digests().of([r.id for r in records]) == [reference_digest(r) for r in records]


def test_digests_of_a_set_just_read_are_reused(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text('{"id": "a", "input": "x", "references": ["r"]}\n', "utf-8")
    golden = load_goldens(path, "qa")
    known = loaded_digests(golden.content_hash)
    assert known is golden.digests() and known.of(["a"]) == [record_digest("x", ["r"], [])]
    assert known.of(["b"]) is None
    assert loaded_digests("sha256:" + "0" * 64) is None


def test_a_packed_baseline_with_other_digests_is_still_refused(tmp_path: Path) -> None:
    path = tmp_path / "qa.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"q{i}", "input": f"x{i}", "references": ["r"]}) + "\n"
            for i in range(3)
        ),
        "utf-8",
    )
    golden = load_goldens(path, "qa")
    ids = [record.id for record in golden.records]
    digests = [golden.digests()[i] for i in ids]

    def baseline(digest_list: list[str]) -> SuiteBaseline:
        return SuiteBaseline.build(
            golden_hash=golden.content_hash,
            goldens="qa.jsonl",
            samples=1,
            metrics={},
            ids=ids,
            digests=digest_list,
            outputs=[["o"]] * 3,
            stats={},
            packed=True,
        )

    def check(suite: SuiteBaseline) -> None:
        verify_suite(
            suite,
            suite="qa",
            golden_hash=golden.content_hash,
            signatures={},
            source="b.json",
            digests=golden.digests(),
        )

    check(baseline(digests))
    with pytest.raises(BaselineError, match="example q1 has another digest"):
        check(baseline([digests[0], "0" * 16, digests[2]]))


# -- predictions ------------------------------------------------------------------------------


def reference_predictions(path: Path, golden: GoldenSet, samples: int) -> Any:
    """read_predictions as it was: every line the careful way, every check in turn."""
    from goldgate.errors import SystemRunError
    from goldgate.systems.predictions import _prediction_outputs, prediction_id

    try:
        text = read_utf8(path, InputError, what="predictions file")
        expected = golden.by_id()
        found: dict[str, list[str]] = {}
        lines: dict[str, int] = {}
        unknown: list[tuple[str, int]] = []
        for number, item in careful_json_lines(text, str(path), InputError):
            where = f"{path}:{number}"
            record_id = prediction_id(item, where, number, lines)
            if record_id not in expected:
                unknown.append((record_id, number))
                continue
            found[record_id] = _prediction_outputs(item, samples, f"{where}: id {record_id!r}")
        if unknown or len(found) != len(expected):
            return "unknown or missing"
        return {record.id: found[record.id] for record in golden.records}
    except (InputError, SystemRunError) as exc:
        return str(exc)


_prediction = st.one_of(
    st.fixed_dictionaries({"id": st.sampled_from(["a", "b", "c", "z"]), "output": _text}),
    st.fixed_dictionaries(
        {"id": st.one_of(st.sampled_from(["a", "b"]), st.integers(0, 3)), "output": _json}
    ),
    st.fixed_dictionaries(
        {"id": st.sampled_from(["a", "b", "c"]), "outputs": st.lists(_text, max_size=3)}
    ),
    st.dictionaries(st.sampled_from(["id", "output", "outputs", "x"]), _json, max_size=3),
)


@_SETTINGS
@given(
    rows=st.lists(
        st.one_of(
            _prediction.map(json.dumps),
            st.just('{"id": "a", "output": "\\ud800"}'),
            st.just(""),
        ),
        max_size=6,
    ),
    samples=st.sampled_from([1, 1, 2]),
)
def test_predictions_read_as_the_careful_way_reads_them(
    tmp_path: Path, rows: list[str], samples: int
) -> None:
    from goldgate.errors import SystemRunError
    from goldgate.systems.predictions import read_predictions

    golden = GoldenSet(
        "qa",
        Path("qa.jsonl"),
        tuple(GoldenRecord(i, "x", ("r",)) for i in ("a", "b", "c")),
        "sha256:0",
    )
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(rows), "utf-8")
    try:
        got: Any = read_predictions(path, golden, samples=samples)
    except SystemRunError as exc:
        got = "unknown or missing" if "id(s)" in str(exc) else str(exc)
    except InputError as exc:
        got = str(exc)
    assert got == reference_predictions(path, golden, samples)
