"""MkDocs hook: the reference pages, generated from the code at build time so they cannot drift.

- ``reference/configuration.md`` from the configuration's JSON Schema (the pydantic models);
- ``reference/cli.md`` from the ``argparse`` parser of ``goldgate``;
- ``reference/metrics.md`` from the metric registry (options, direction, signature);
- ``reference/result.md`` and ``reference/baseline.md`` from those files' JSON Schemas;
- ``reference/action.md`` from the GitHub Action's ``action.yml`` (inputs and outputs).

Pages may also quote constants of the code as ``{{ NAME }}`` (see ``CONSTANTS``): the number
the site shows is the one the code uses. An unknown ``{{ NAME }}`` fails the build.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
from collections.abc import Iterator
from typing import Any

from mkdocs.structure.files import File, Files

GENERATED = {
    "reference/configuration.md": "_configuration_page",
    "reference/cli.md": "_cli_page",
    "reference/metrics.md": "_metrics_page",
    "reference/result.md": "_result_page",
    "reference/baseline.md": "_baseline_page",
    "reference/action.md": "_action_page",
}

#: What each built-in metric is identical to, and the differential test that holds it there
#: (``tests/test_docs.py`` checks that every registered metric has an entry and that its test
#: file exists and imports the peer).
PEERS: dict[str, tuple[str, str, str]] = {
    "bleu": ("sacrebleu 2.x `BLEU().corpus_score`", "tests/metrics/test_bleu.py", "sacrebleu"),
    "sentence_bleu": ("sacrebleu 2.x `sentence_bleu`", "tests/metrics/test_bleu.py", "sacrebleu"),
    "chrf": ("sacrebleu 2.x `CHRF().corpus_score`", "tests/metrics/test_chrf.py", "sacrebleu"),
    "chrf++": ("sacrebleu 2.x `CHRF(word_order=2)`", "tests/metrics/test_chrf.py", "sacrebleu"),
    **{
        f"rouge{n}": (
            "rouge-score 0.1.2 `RougeScorer` (`score_multi` over several references)",
            "tests/metrics/test_rouge.py",
            "rouge_score",
        )
        for n in [*range(1, 10), "L", "Lsum"]
    },
    **{
        name: (
            "the ROUGE-1.5.5 definitions (reference implementation in the test)",
            "tests/metrics/test_rouge_perl.py",
            "rouge",
        )
        for name in ("rougeW", "rougeS", "rougeSU")
    },
    "exact_match": ("the SQuAD v1.1 evaluation script", "tests/metrics/test_exact.py", "squad"),
    "token_f1": ("the SQuAD v1.1 evaluation script", "tests/metrics/test_exact.py", "squad"),
    "length_ratio": (
        "candidate tokens / reference tokens × 100 (sacrebleu's closest reference length)",
        "tests/metrics/test_length.py",
        "sacrebleu",
    ),
    "ter": ("sacrebleu 2.6 `TER` (per example: `sentence_score`)", "tests/metrics/test_ter.py",
            "sacrebleu"),  # fmt: skip
    "meteor": (
        "NLTK 3.10 `meteor_score`, averaged over examples as HF `evaluate`",
        "tests/metrics/test_meteor.py",
        "nltk",
    ),
    "embedding_similarity": (
        "the cosine of model2vec / sentence-transformers embeddings (no external peer)",
        "tests/metrics/test_embedding.py",
        "model2vec",
    ),
    "llm_judge": (
        "a judge model's rubric grade (no external peer)",
        "tests/metrics/test_judge.py",
        "fake_openai",
    ),
}


def constants() -> dict[str, str]:
    """The code's numbers that pages quote, formatted as the help texts format them."""
    from goldgate.metrics import PARALLEL_MIN_EXAMPLES
    from goldgate.model.baseline import PACK_MIN_EXAMPLES

    return {
        "PARALLEL_MIN_EXAMPLES": f"{PARALLEL_MIN_EXAMPLES:,}",
        "PACK_MIN_EXAMPLES": f"{PACK_MIN_EXAMPLES:,}",
    }


_PLACEHOLDER = re.compile(r"(?<!`)\{\{\s*([A-Z_][A-Z0-9_]*)\s*\}\}")


def on_files(files: Files, config: Any) -> Files:
    """Add the generated reference pages."""
    for path, builder in GENERATED.items():
        files.append(File.generated(config, path, content=globals()[builder]()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Replace ``{{ NAME }}`` by the code's constant; an unknown name fails the build."""
    known = constants()

    def replace(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in known:
            raise ValueError(f"{page.file.src_uri}: unknown constant {{{{ {name} }}}}")
        return known[name]

    return _PLACEHOLDER.sub(replace, markdown)


# -- shared ---------------------------------------------------------------------------------


def _cell(text: Any) -> str:
    """Text for a Markdown table cell: escaped HTML, no line breaks, no bare pipes."""
    return html.escape(" ".join(str(text).split())).replace("|", "\\|")


def _code(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value
    return "<code>" + html.escape(text).replace("|", "&#124;") + "</code>"


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if ref:
        return dict(root["$defs"][ref.rsplit("/", 1)[1]])
    return schema


def _type_of(schema: dict[str, Any], root: dict[str, Any]) -> str:
    """A short type for a schema: ``integer``, ``string or null``, ``one of 'a', 'b'``."""
    if "$ref" in schema:
        return schema["$ref"].rsplit("/", 1)[1]
    if "const" in schema:
        return json.dumps(schema["const"])
    if "enum" in schema:
        return "one of " + ", ".join(json.dumps(v) for v in schema["enum"])
    for key in ("anyOf", "oneOf"):
        if key in schema:
            kinds = [_type_of(option, root) for option in schema[key]]
            return " or ".join(dict.fromkeys(k for k in kinds if k))
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return f"list of {_type_of(items, root)}" if items else "list"
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and extra:
            return f"mapping of name → {_type_of(extra, root)}"
        return "mapping"
    if isinstance(kind, list):
        return " or ".join(kind)
    return str(kind or "")


def _bounds(schema: dict[str, Any]) -> str:
    parts = []
    for key, word in (("minimum", "≥"), ("exclusiveMinimum", ">"), ("maximum", "≤"),
                      ("exclusiveMaximum", "<"), ("minLength", "length ≥"),
                      ("minItems", "items ≥"), ("minProperties", "keys ≥")):  # fmt: skip
        if key in schema:
            parts.append(f"{word} {schema[key]}")
    for option in schema.get("anyOf", []):
        extra = _bounds(option)
        if extra:
            parts.append(extra)
    return ", ".join(parts)


def _anchor(path: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", path.lower()).strip("-")


# -- configuration --------------------------------------------------------------------------


def _object_sections(
    schema: dict[str, Any], root: dict[str, Any], path: str
) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every object of the configuration with its key path, the top level first."""
    schema = _resolve(schema, root)
    yield path, schema
    for key, prop in schema.get("properties", {}).items():
        child = f"{path}.{key}" if path else key
        for target, suffix in _children(prop, root):
            yield from _object_sections(target, root, child + suffix)


def _children(prop: dict[str, Any], root: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """The objects a property holds: itself, its options, or the values of a mapping."""
    options = prop.get("anyOf", [prop])
    for option in options:
        option = _resolve(option, root) if "$ref" in option else option
        if option.get("properties") and option is not prop or "$ref" in prop:
            yield option, ""
        extra = option.get("additionalProperties")
        if isinstance(extra, dict) and ("$ref" in extra or extra.get("properties")):
            yield _resolve(extra, root), ".<name>"
    if prop.get("properties") and "anyOf" not in prop and "$ref" not in prop:
        yield prop, ""


def config_keys() -> list[str]:
    """Every key path of the configuration (``suites.<name>.gate.<metric>.max_drop``)."""
    from goldgate.model.config_schema import config_json_schema

    root = config_json_schema()
    keys = []
    for path, schema in _object_sections(root, root, ""):
        if path.endswith((".metrics", "metrics.<name>")) or ".metrics." in path:
            continue
        for key in schema.get("properties", {}):
            keys.append(f"{path}.{key}" if path else key)
    return keys


def _configuration_page() -> str:
    from goldgate.model.config_schema import config_json_schema

    root = config_json_schema()
    lines = [
        "# Configuration reference",
        "",
        "<!-- Generated by docs/hooks/reference.py from goldgate's JSON Schema "
        "(`goldgate schema`); do not edit. -->",
        "",
        "Every key of `goldgate.yaml` (or of `[tool.goldgate]` in `pyproject.toml`), generated "
        "from the configuration's models. `goldgate schema` prints the same as a JSON Schema "
        "for editors. `<name>` stands for a name you choose (a suite, a gated metric). A "
        "metric's own options are in the [metrics reference](metrics.md).",
        "",
    ]
    sections = list(_object_sections(root, root, ""))
    where: dict[str, str] = {}
    for path, schema in sections:
        where.setdefault(str(schema.get("title")), _anchor(path) or "top-level")
    names = [name for name in root["$defs"] if name in where]
    linked = re.compile(r"\b(" + "|".join(map(re.escape, names)) + r")\b")
    seen: set[str] = set()
    for path, schema in sections:
        if path in seen or path.endswith("metrics") or ".metrics." in path:
            continue
        seen.add(path)
        properties = schema.get("properties", {})
        if not properties:
            continue
        title = f"`{path}`" if path else "Top level"
        lines += [f"## {title} {{ #{_anchor(path) or 'top-level'} }}", ""]
        description = (schema.get("description") or "").strip()
        if description and path:
            lines += [_cell(description).replace("``", "`"), ""]
        lines += ["| key | type | default | meaning |", "|---|---|---|---|"]
        required = set(schema.get("required", []))
        for key, prop in properties.items():
            full = f"{path}.{key}" if path else key
            kind = _type_of(prop, root)
            bounds = _bounds(prop)
            if bounds:
                kind += f" ({bounds})"
            if key in required:
                default = "*required*"
            elif "default" in prop:
                default = _code(prop["default"])
            else:
                default = "—"
            meaning = prop.get("description") or _resolve(prop, root).get("description") or ""
            lines.append(
                f"| <code id=\"{_anchor(full)}\">{html.escape(full)}</code> "
                f"| {linked.sub(lambda m: f'[{m.group(1)}](#{where[m.group(1)]})', _cell(kind))} "
                f"| {default} | {_cell(meaning)} |"
            )
        lines.append("")
    return "\n".join(lines)


# -- command line ---------------------------------------------------------------------------


def _subcommands() -> dict[str, argparse.ArgumentParser]:
    from goldgate.cli.main import build_parser

    parser = build_parser()
    (action,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(action.choices)


def cli_options() -> dict[str, list[str]]:
    """Every command and the option strings (or positional names) it takes."""
    found: dict[str, list[str]] = {}
    for name, sub in _subcommands().items():
        found[name] = [
            (a.option_strings[-1] if a.option_strings else a.dest)
            for a in sub._actions
            if a.help != argparse.SUPPRESS
        ]
    return found


def _cli_page() -> str:
    os.environ["COLUMNS"] = "100"  # usage lines wrapped the same on every machine
    lines = [
        "# Command-line reference",
        "",
        "<!-- Generated by docs/hooks/reference.py from goldgate's argparse parser; "
        "do not edit. -->",
        "",
        "Every command of `goldgate` and every option, generated from the parser that "
        "`goldgate COMMAND --help` prints. Every command exits with 0 (pass or improved), "
        "1 (a regression, and nothing else), 2 (a usage or input error) or 3 (an internal "
        "error); see [exit codes](exit-codes.md).",
        "",
    ]
    for name, sub in _subcommands().items():
        lines += [f"## `goldgate {name}` {{ #{name} }}", "", _cell(sub.description or ""), ""]
        usage = sub.format_usage().strip().removeprefix("usage: ")
        lines += ["```text", usage, "```", ""]
        lines += ["| option | argument | default | meaning |", "|---|---|---|---|"]
        for action in sub._actions:
            if action.help == argparse.SUPPRESS:
                continue
            flags = ", ".join(action.option_strings) or action.dest
            anchor = _anchor(f"{name}-{action.option_strings[-1] if action.option_strings else action.dest}")
            if action.nargs == 0:
                argument = ""
            elif action.choices:
                argument = "one of " + ", ".join(str(c) for c in action.choices)
            else:
                argument = action.metavar or action.dest.upper()
                if action.nargs in ("*", "+"):
                    argument += " …"
            default = action.default
            shown = "" if default in (None, False, argparse.SUPPRESS) or action.nargs == 0 else _code(str(default))
            if isinstance(action, argparse._AppendAction):
                argument += " (repeatable)"
            help_text = (action.help or "") % {"default": default, "prog": sub.prog}
            lines.append(
                f"| <code id=\"{anchor}\">{html.escape(flags)}</code> | {_cell(argument)} "
                f"| {shown} | {_cell(help_text)} |"
            )
        lines.append("")
    return "\n".join(lines)


# -- metrics --------------------------------------------------------------------------------


def _metrics_page() -> str:
    from goldgate.metrics.registry import _BUILTINS, _load_object, create_metric

    lines = [
        "# Metrics reference",
        "",
        "<!-- Generated by docs/hooks/reference.py from the metric registry; do not edit. -->",
        "",
        "Every built-in metric, generated from `goldgate.metrics.registry`: its options "
        "(spelled as in `goldgate.yaml` or after the colon of `goldgate score --metric "
        "NAME:key=value`), its direction, its signature with the default options and one "
        "reference per example, and the implementation it is identical to (each held there "
        "by a differential test). Scores are on a 0–100 scale.",
        "",
        "| metric | direction | identical to |",
        "|---|---|---|",
    ]
    for name, target in _BUILTINS.items():
        cls = _load_object(target, name)
        peer = PEERS[name][0]
        direction = "higher is better" if cls.higher_is_better else "**lower is better**"
        lines.append(f"| [`{name}`](#{_anchor(name)}) | {direction} | {_cell(peer)} |")
    lines.append("")
    for name, target in _BUILTINS.items():
        cls = _load_object(target, name)
        peer, test, _ = PEERS[name]
        doc = (cls.__doc__ or "").strip().split("\n\n")[0]
        lines += [f"## `{name}` {{ #{_anchor(name)} }}", "", _cell(doc).replace("``", "`"), ""]
        lines.append(
            f"- **direction**: {'higher is better' if cls.higher_is_better else 'lower is better'}"
        )
        lines.append(f"- **identical to**: {_cell(peer)} (`{test}`)")
        try:
            signature = str(create_metric(name).signature([1]))
        except Exception as exc:  # needs a model, an endpoint or WordNet: say what
            first = str(exc).split(";")[0]
            signature = ""
            lines.append(f"- **signature**: depends on options it requires ({_cell(first)})")
        if signature:
            lines.append(f"- **signature** (defaults): `{signature}`")
        options = cls.Options.json_schema()
        description = (options.get("description") or "").strip()
        lines.append("")
        if description:
            lines += ["Options: " + _cell(description).replace("``", "`"), ""]
        properties = options.get("properties", {})
        if not properties:
            lines += ["This metric takes no options.", ""]
            continue
        lines += ["| option | type | default |", "|---|---|---|"]
        for key, prop in properties.items():
            kind = _type_of(prop, options)
            bounds = _bounds(prop)
            if bounds:
                kind += f" ({bounds})"
            default = _code(prop["default"]) if "default" in prop else "*required*"
            lines.append(
                f"| <code id=\"{_anchor(name + '-' + key)}\">{html.escape(key)}</code> "
                f"| {_cell(kind)} | {default} |"
            )
        lines.append("")
    return "\n".join(lines)


# -- result and baseline --------------------------------------------------------------------


def _document_page(which: str, title: str, intro: str) -> str:
    from goldgate.cli.commands.schema import schema_of

    root = schema_of(which)
    lines = [
        f"# {title}",
        "",
        f"<!-- Generated by docs/hooks/reference.py from `goldgate schema {which}`; "
        "do not edit. -->",
        "",
        intro,
        "",
        f"Schema: `{root.get('title', which)}`. Every object below is a `$defs` entry of "
        f"`goldgate schema {which}`; the top level is first.",
        "",
    ]
    sections = [(root.get("title", which), root, "top-level")]
    sections += [(name, spec, _anchor(name)) for name, spec in root.get("$defs", {}).items()]
    for name, spec, anchor in sections:
        lines += [f"## {name} {{ #{anchor} }}", ""]
        description = (spec.get("description") or "").strip()
        if description:
            lines += [_cell(description).replace("``", "`"), ""]
        properties = spec.get("properties", {})
        if not properties:
            lines += [f"Type: {_cell(_type_of(spec, root))}", ""]
            continue
        required = set(spec.get("required", []))
        lines += ["| field | type | required | meaning |", "|---|---|---|---|"]
        for key, prop in properties.items():
            kind = _type_of(prop, root)
            linked = re.sub(
                r"\b(" + "|".join(map(re.escape, root.get("$defs", {}))) + r")\b",
                lambda m: f"[{m.group(1)}](#{_anchor(m.group(1))})",
                _cell(kind),
            ) if root.get("$defs") else _cell(kind)  # fmt: skip
            meaning = prop.get("description") or ""
            lines.append(
                f"| `{key}` | {linked} | {'yes' if key in required else ''} | {_cell(meaning)} |"
            )
        lines.append("")
    return "\n".join(lines)


def _result_page() -> str:
    return _document_page(
        "result",
        "Result format (`result.json`)",
        "What `goldgate run` writes to `result.json` in the report directory (and prints with "
        "`--json`), generated from the result's models. The per-example rows are in "
        "`examples.jsonl.gz` beside it, one gzip-compressed JSON line per example; "
        "`goldgate report result.json` reads both back.",
    )


def _baseline_page() -> str:
    return _document_page(
        "baseline",
        "Baseline format (`goldgate.baseline.json`)",
        "What `goldgate bless` writes and the gate reads, generated from the baseline's "
        f"models. Suites of {constants()['PACK_MIN_EXAMPLES']} examples or more keep their per-example data packed "
        "(`goldgate.baseline/2`); see [the baseline file](../explanation/baseline.md).",
    )


# -- the GitHub Action ----------------------------------------------------------------------


def action() -> dict[str, Any]:
    """``action.yml`` at the repository's root (beside ``mkdocs.yml``)."""
    import pathlib

    import yaml

    root = pathlib.Path(__file__).resolve().parents[2]
    document: dict[str, Any] = yaml.safe_load((root / "action.yml").read_text(encoding="utf-8"))
    return document


def _action_page() -> str:
    document = action()
    lines = [
        "# GitHub Action reference",
        "",
        "<!-- Generated by docs/hooks/reference.py from action.yml; do not edit. -->",
        "",
        f"{_cell(document.get('description', ''))} Every input and output of the action, "
        "generated from its `action.yml`; how to use them: "
        "[GitHub Actions](../how-to/github-actions.md). Inputs are strings, as in every "
        "action (`\"false\"`, not `false`).",
        "",
        "## Inputs { #inputs }",
        "",
        "| input | default | meaning |",
        "|---|---|---|",
    ]
    for name, spec in document.get("inputs", {}).items():
        default = spec.get("default")
        shown = _code(str(default)) if default not in (None, "") else ""
        if spec.get("required"):
            shown = "*required*"
        lines.append(
            f"| <code id=\"input-{_anchor(name)}\">{html.escape(name)}</code> | {shown} "
            f"| {_cell(spec.get('description', ''))} |"
        )
    lines += ["", "## Outputs { #outputs }", "", "| output | meaning |", "|---|---|"]
    for name, spec in document.get("outputs", {}).items():
        lines.append(
            f"| <code id=\"output-{_anchor(name)}\">{html.escape(name)}</code> "
            f"| {_cell(spec.get('description', ''))} |"
        )
    lines.append("")
    return "\n".join(lines)
