"""``goldgate init``: scaffold a small working example into a directory.

It writes a configuration, two golden sets and the predictions a pipeline would have written
for them, so that ``goldgate run`` and ``goldgate bless`` work at once. Replace the
predictions with your own system's (or switch ``system`` to a command or a callable).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from goldgate.errors import UsageError
from goldgate.terminal import console

HELP = "Write a small working example: goldgate.yaml, golden sets and predictions."

CONFIG = """\
# goldgate configuration (`goldgate schema` prints its JSON schema)
version: 1

# Where candidate outputs come from. Here: files your own pipeline writes, one per suite.
# Other choices:  command: python -m app.generate   |   callable: app.generate:answer
system:
  predictions: predictions/{suite}.jsonl

suites:
  qa:
    goldens: goldens/qa.jsonl
    metrics:
      exact_match: {normalizer: squad}
      token_f1: {normalizer: squad}
    gate:
      exact_match: {min: 60.0, max_drop: 2.0, max_flips: 2}
      token_f1: {max_drop: 2.0}
  translate:
    goldens: goldens/translate.jsonl
    metrics:
      bleu: {tokenize: 13a}
      chrf: {}
    gate:
      bleu: {max_drop: 1.0}
      chrf: {min: 30.0}

# A drop beyond max_drop fails only when the paired bootstrap says it is real.
significance: {method: paired_bootstrap, resamples: 1000, alpha: 0.05, seed: 0}
baseline: goldgate.baseline.json
report: {dir: goldgate-report, formats: [md, html, json, junit]}
"""

# (question, context, references, tags, the example system's answer)
QA: list[tuple[str, str, list[str], list[str], str]] = [
    (
        "What colour is the door of the lighthouse keeper's cottage?",
        "The lighthouse keeper's cottage has a green door and a slate roof.",
        ["green"],
        ["place"],
        "green",
    ),
    (
        "How many steps lead to the lamp room?",
        "Visitors climb 214 steps to reach the lamp room at the top of the tower.",
        ["214", "214 steps"],
        ["number"],
        "214 steps",
    ),
    (
        "Who painted the harbour mural?",
        "The harbour mural was painted by Ines Calloway over two summers.",
        ["Ines Calloway"],
        ["person"],
        "Ines Calloway",
    ),
    (
        "In which year did the ferry service start?",
        "The ferry service between the two islands started in 1958.",
        ["1958"],
        ["number"],
        "1958",
    ),
    (
        "What is the bakery on Mill Lane known for?",
        "The bakery on Mill Lane is known for its rye loaves baked in a wood oven.",
        ["rye loaves", "its rye loaves"],
        ["place"],
        "rye loaves",
    ),
    (
        "Which river flows through the old town?",
        "The old town is split in two by the river Wend, crossed by four bridges.",
        ["the river Wend", "Wend"],
        ["place"],
        "the river Wend",
    ),
    (
        "How long is the coastal footpath?",
        "The coastal footpath runs for 38 kilometres from the harbour to the cape.",
        ["38 kilometres"],
        ["number"],
        "38 kilometres",
    ),
    (
        "Who founded the village school?",
        "The village school was founded by the weaver Tomas Reddle in 1871.",
        ["Tomas Reddle", "the weaver Tomas Reddle"],
        ["person"],
        "Tomas Reddle",
    ),
    (
        "What do the fishermen catch in spring?",
        "In spring the fishermen catch mackerel; in autumn they switch to crab.",
        ["mackerel"],
        ["nature"],
        "mackerel",
    ),
    (
        "What is the highest hill on the island called?",
        "The highest hill on the island is Carrow Knoll, 312 metres above the sea.",
        ["Carrow Knoll"],
        ["place"],
        "Carrow Knoll",
    ),
    (
        "How many bridges cross the river Wend?",
        "The old town is split in two by the river Wend, crossed by four bridges.",
        ["four", "four bridges"],
        ["number"],
        "four bridges",
    ),
    (
        "Which bird nests on the cliffs each May?",
        "Each May, puffins return to nest on the northern cliffs.",
        ["puffins"],
        ["nature"],
        "puffins",
    ),
    (
        "Who keeps the parish records?",
        "The parish records are kept by the librarian, Marta Olsen, in the town hall.",
        ["Marta Olsen", "the librarian, Marta Olsen"],
        ["person"],
        "Marta Olsen",
    ),
    (
        "What was the mill used for before 1900?",
        "Before 1900 the mill ground barley; it later became a sawmill.",
        ["grinding barley", "ground barley"],
        ["history"],
        "it ground barley",
    ),
    (
        "When does the summer market open?",
        "The summer market opens on the first Saturday of June.",
        ["on the first Saturday of June", "the first Saturday of June"],
        ["history"],
        "the first Saturday of June",
    ),
    (
        "What is the ferry called?",
        "The ferry, the Gull Wing, carries forty cars and two hundred passengers.",
        ["the Gull Wing", "Gull Wing"],
        ["place"],
        "the Gull Wing",
    ),
    (
        "How many passengers can the ferry carry?",
        "The ferry, the Gull Wing, carries forty cars and two hundred passengers.",
        ["two hundred", "200"],
        ["number"],
        "forty",
    ),
    (
        "Which tree grows along the main street?",
        "Lime trees line the main street; they were planted after the great storm.",
        ["lime trees", "lime"],
        ["nature"],
        "lime trees",
    ),
    (
        "Why were the lime trees planted?",
        "Lime trees line the main street; they were planted after the great storm.",
        ["after the great storm"],
        ["history"],
        "the main street",
    ),
    (
        "Who wrote the town's first guidebook?",
        "The first guidebook to the town was written by the schoolteacher Abel Finch.",
        ["Abel Finch"],
        ["person"],
        "Abel Finch",
    ),
    (
        "What is kept in the museum's east room?",
        "The museum's east room holds a collection of ship models and old charts.",
        ["ship models and old charts", "a collection of ship models and old charts"],
        ["place"],
        "ship models",
    ),
    (
        "How deep is the harbour at low tide?",
        "At low tide the harbour is only four metres deep, so large ships wait outside.",
        ["four metres", "only four metres"],
        ["number"],
        "four metres",
    ),
    (
        "Which animal appears on the town's coat of arms?",
        "The town's coat of arms shows a silver seal on a blue field.",
        ["a silver seal", "seal"],
        ["history"],
        "a silver seal",
    ),
    (
        "What powers the lighthouse lamp today?",
        "Since 1994 the lighthouse lamp has run on solar panels and batteries.",
        ["solar panels and batteries"],
        ["history"],
        "solar panels",
    ),
    (
        "Who rebuilt the pier after the storm?",
        "After the storm the pier was rebuilt by the engineer Clara Mott.",
        ["Clara Mott", "the engineer Clara Mott"],
        ["person"],
        "Clara Mott",
    ),
    (
        "What grows in the walled garden?",
        "The walled garden grows apricots against its south-facing wall.",
        ["apricots"],
        ["nature"],
        "apricots",
    ),
    (
        "How old is the chapel?",
        "The chapel on the headland is about six hundred years old.",
        ["about six hundred years old", "six hundred years"],
        ["history"],
        "six hundred years",
    ),
    (
        "Where do the seals rest?",
        "The seals rest on the sandbank at the mouth of the river.",
        ["on the sandbank at the mouth of the river", "the sandbank"],
        ["nature"],
        "the sandbank",
    ),
    (
        "What time does the last ferry leave?",
        "The last ferry of the day leaves at half past nine in the evening.",
        ["half past nine in the evening", "half past nine"],
        ["number"],
        "nine",
    ),
    (
        "Which festival is held in October?",
        "In October the town holds a lantern festival along the harbour wall.",
        ["a lantern festival", "the lantern festival"],
        ["history"],
        "a lantern festival",
    ),
]

# (German source, English reference, the example system's translation, tags)
TRANSLATE: list[tuple[str, str, str, list[str]]] = [
    (
        "Der Zug fährt um acht Uhr ab.",
        "The train leaves at eight o'clock.",
        "The train departs at eight o'clock.",
        ["travel"],
    ),
    (
        "Wo ist der nächste Bahnhof?",
        "Where is the nearest station?",
        "Where is the next station?",
        ["travel"],
    ),
    (
        "Das Museum ist montags geschlossen.",
        "The museum is closed on Mondays.",
        "The museum is closed on Mondays.",
        ["city"],
    ),
    (
        "Ich hätte gern einen Kaffee mit Milch.",
        "I would like a coffee with milk.",
        "I would like a coffee with milk.",
        ["food"],
    ),
    (
        "Die Brücke wurde im letzten Jahr renoviert.",
        "The bridge was renovated last year.",
        "The bridge was renovated in the last year.",
        ["city"],
    ),
    (
        "Es regnet seit gestern Abend.",
        "It has been raining since last night.",
        "It rains since yesterday evening.",
        ["weather"],
    ),
    (
        "Der Markt findet jeden Samstag statt.",
        "The market takes place every Saturday.",
        "The market takes place every Saturday.",
        ["city"],
    ),
    (
        "Können Sie mir den Weg zum Hafen zeigen?",
        "Can you show me the way to the harbour?",
        "Can you show me the way to the port?",
        ["travel"],
    ),
    ("Die Suppe ist zu heiß.", "The soup is too hot.", "The soup is too hot.", ["food"]),
    (
        "Morgen wird es sonnig und warm.",
        "Tomorrow it will be sunny and warm.",
        "Tomorrow it becomes sunny and warm.",
        ["weather"],
    ),
    (
        "Das Hotel liegt direkt am Strand.",
        "The hotel is right on the beach.",
        "The hotel lies directly at the beach.",
        ["travel"],
    ),
    (
        "Wir haben einen Tisch für vier Personen reserviert.",
        "We have booked a table for four people.",
        "We have reserved a table for four people.",
        ["food"],
    ),
    (
        "Die Bibliothek öffnet um neun Uhr.",
        "The library opens at nine o'clock.",
        "The library opens at nine o'clock.",
        ["city"],
    ),
    (
        "Der Wind kommt heute aus dem Norden.",
        "Today the wind is coming from the north.",
        "The wind comes from the north today.",
        ["weather"],
    ),
    (
        "Ein Fahrschein kostet drei Euro.",
        "A ticket costs three euros.",
        "A ticket costs three euros.",
        ["travel"],
    ),
    ("Das Brot ist noch warm.", "The bread is still warm.", "The bread is still warm.", ["food"]),
]


def files() -> dict[str, str]:
    """Relative path → content of every file ``init`` writes."""
    qa_golden, qa_predictions = [], []
    for number, (question, context, references, tags, output) in enumerate(QA, start=1):
        example_id = f"qa-{number:03d}"
        qa_golden.append(
            {
                "id": example_id,
                "input": {"question": question, "context": context},
                "references": references,
                "tags": tags,
            }
        )
        qa_predictions.append({"id": example_id, "output": output})
    tr_golden, tr_predictions = [], []
    for number, (source, reference, output, tags) in enumerate(TRANSLATE, start=1):
        example_id = f"tr-{number:03d}"
        tr_golden.append(
            {"id": example_id, "input": source, "references": [reference], "tags": tags}
        )
        tr_predictions.append({"id": example_id, "output": output})
    return {
        "goldgate.yaml": CONFIG,
        "goldens/qa.jsonl": _jsonl(qa_golden),
        "goldens/translate.jsonl": _jsonl(tr_golden),
        "predictions/qa.jsonl": _jsonl(qa_predictions),
        "predictions/translate.jsonl": _jsonl(tr_predictions),
    }


#: ``.venv/`` too: the quick start makes one beside goldgate.yaml, and the fingerprint that
#: decides a resume reads every untracked file that git does not ignore.
GITIGNORE_LINES = (".goldgate/", "goldgate-report/", ".venv/")


def _jsonl(rows: Sequence[Mapping[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate init``."""
    parser.add_argument(
        "directory", nargs="?", type=Path, default=Path("."), help="where (default: here)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite existing files")


def scaffold(directory: Path, *, force: bool = False) -> list[Path]:
    """Write the example into ``directory``; refuses to overwrite unless ``force``."""
    content = files()
    existing = [name for name in content if (directory / name).exists()]
    if existing and not force:
        raise UsageError(
            f"{directory}: would overwrite {', '.join(existing)}; use --force to replace them"
        )
    written = []
    for name, text in content.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    gitignore = directory / ".gitignore"
    present = gitignore.read_text(encoding="utf-8").splitlines() if gitignore.exists() else []
    missing = [line for line in GITIGNORE_LINES if line not in present]
    if missing:
        prefix = "" if not present or gitignore.read_text(encoding="utf-8").endswith("\n") else "\n"
        with gitignore.open("a", encoding="utf-8") as stream:
            stream.write(prefix + "".join(line + "\n" for line in missing))
        written.append(gitignore)
    return written


def run(args: argparse.Namespace) -> int:
    """Scaffold and say what to do next."""
    directory: Path = args.directory
    written = scaffold(directory, force=args.force)
    for path in written:
        console.out(f"wrote {path}")
    where = "" if directory == Path(".") else f"cd {directory} && "
    console.out(
        "\nnext:\n"
        f"  {where}goldgate run      # score the example predictions (no baseline yet)\n"
        f"  {where}goldgate bless    # accept these scores as the baseline\n"
        "  then point system.predictions at your own pipeline's outputs"
    )
    return 0
