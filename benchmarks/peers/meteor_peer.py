"""Peer for the benchmark: NLTK's METEOR averaged over examples, as Hugging Face ``evaluate``.

Rows are ``{"candidate": str, "references": [str, ...]}``; texts are tokenised with
``nltk.word_tokenize(text, preserve_line=True)`` (Punkt's models are not downloadable here).
WordNet comes from ``$NLTK_DATA`` (``./dev test`` builds ``.ci/nltk_data``). Prints
``{"meteor"}`` on 0-100.
"""

import json
import sys

from nltk.tokenize import word_tokenize
from nltk.translate.meteor_score import meteor_score


def main(path):
    with open(path, encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    scores = [
        meteor_score(
            [word_tokenize(ref, preserve_line=True) for ref in row["references"]],
            word_tokenize(row["candidate"], preserve_line=True),
        )
        for row in rows
    ]
    print(json.dumps({"meteor": 100 * sum(scores) / len(scores)}))


if __name__ == "__main__":
    main(sys.argv[1])
