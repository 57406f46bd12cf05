"""Peer for the benchmark: sacrebleu's corpus BLEU and chrF over a JSONL file.

Rows are ``{"candidate": str, "references": [str, ...]}``; reference counts may differ (a
missing reference is ``None``, as sacrebleu expects). Prints ``{"bleu", "chrf"}``, or only the
metrics named after the path (``sacrebleu_peer.py data.jsonl chrf``).
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


def main(path, names):
    hypotheses, streams = load(path)
    scores = {}
    if "bleu" in names:
        scores["bleu"] = sacrebleu.corpus_bleu(hypotheses, streams).score
    if "chrf" in names:
        scores["chrf"] = sacrebleu.corpus_chrf(hypotheses, streams).score
    print(json.dumps(scores))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:] or ["bleu", "chrf"])
