"""``goldgate schema``: print a JSON Schema (configuration, result or baseline)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from goldgate.terminal import console

HELP = "Print the JSON Schema of goldgate.yaml (or of the result or baseline files)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Declare the options of ``goldgate schema``."""
    parser.add_argument(
        "which",
        nargs="?",
        choices=("config", "result", "baseline"),
        default="config",
        help="which document (default: config)",
    )


def schema_of(which: str) -> dict[str, Any]:
    """The JSON Schema of one of goldgate's documents."""
    if which == "result":
        from goldgate.model.result import RESULT_SCHEMA_VERSION, RunResult

        document = RunResult.model_json_schema()
        document["title"] = f"goldgate result ({RESULT_SCHEMA_VERSION})"
    elif which == "baseline":
        from goldgate.model.baseline import BASELINE_SCHEMA_VERSIONS, Baseline

        document = Baseline.model_json_schema()
        document["title"] = f"goldgate baseline ({' or '.join(BASELINE_SCHEMA_VERSIONS)})"
    else:
        from goldgate.model.config_schema import config_json_schema

        return config_json_schema()
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    return document


def run(args: argparse.Namespace) -> int:
    """Print the schema as indented JSON."""
    console.out(console.json_text(json.dumps(schema_of(args.which), indent=2, ensure_ascii=False)))
    return 0
