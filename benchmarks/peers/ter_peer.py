"""Peer for the benchmark: sacrebleu's corpus TER over a JSONL file (read as sacrebleu_peer
reads it). Prints ``{"ter"}``.
"""

import json
import sys

from sacrebleu.metrics import TER
from sacrebleu_peer import load


def main(path):
    hypotheses, streams = load(path)
    print(json.dumps({"ter": TER().corpus_score(hypotheses, streams).score}))


if __name__ == "__main__":
    main(sys.argv[1])
