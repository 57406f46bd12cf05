"""Peer for the benchmark: sacrebleu's corpus BLEU and chrF over a JSONL file.

Rows are ``{"candidate": str, "references": [str, ...]}``; reference counts may differ (a
missing reference is ``None``, as sacrebleu expects). Prints ``{"bleu", "chrf"}``.
"""

import json
import sys

import sacrebleu


def load(path):
    """Hypotheses and sacrebleu's reference streams (None where a row has fewer references)."""
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    hypotheses = [row["candidate"] for row in rows]
    width = max(len(row["references"]) for row in rows)
    streams = [
        [row["references"][i] if i < len(row["references"]) else None for row in rows]
        for i in range(width)
    ]
    return hypotheses, streams


def main(path):
    hypotheses, streams = load(path)
    bleu = sacrebleu.corpus_bleu(hypotheses, streams)
    chrf = sacrebleu.corpus_chrf(hypotheses, streams)
    print(json.dumps({"bleu": bleu.score, "chrf": chrf.score}))


if __name__ == "__main__":
    main(sys.argv[1])
