"""Peer for the benchmark: sacrebleu's corpus TER over a JSONL file.

Rows are ``{"candidate": str, "references": [str, ...]}``; a missing reference is ``None``,
as sacrebleu expects. Prints ``{"ter"}``.
"""

import json
import sys

from sacrebleu.metrics import TER


def main(path):
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    hypotheses = [row["candidate"] for row in rows]
    width = max(len(row["references"]) for row in rows)
    streams = [
        [row["references"][i] if i < len(row["references"]) else None for row in rows]
        for i in range(width)
    ]
    print(json.dumps({"ter": TER().corpus_score(hypotheses, streams).score}))


if __name__ == "__main__":
    main(sys.argv[1])
