"""Peer for the benchmark: rouge-score ROUGE-1/2/L/Lsum with stemming, ``score_multi`` per row.

Rows are ``{"candidate": str, "references": [str, ...]}``. Prints the mean F of each type on
0-100 (goldgate's corpus ROUGE is the mean of per-example F).
"""

import json
import sys

from rouge_score import rouge_scorer

TYPES = ["rouge1", "rouge2", "rougeL", "rougeLsum"]


def main(path):
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    scorer = rouge_scorer.RougeScorer(TYPES, use_stemmer=True)
    sums = dict.fromkeys(TYPES, 0.0)
    for row in rows:
        scores = scorer.score_multi(row["references"], row["candidate"])
        for name in TYPES:
            sums[name] += scores[name].fmeasure
    print(json.dumps({name: 100 * sums[name] / len(rows) for name in TYPES}))


if __name__ == "__main__":
    main(sys.argv[1])
