"""Make WordNet 3.0 readable by NLTK without a download: ``python tools/wordnet_for_nltk.py DIR``.

Copies Debian's ``wordnet-base`` dictionary (``/usr/share/wordnet``; NLTK refuses symlinks that
leave its data root) into ``DIR/corpora/wordnet/`` and writes the ``lexnames`` file NLTK needs
and Debian lacks; then ``NLTK_DATA=DIR`` gives NLTK's ``wordnet`` (version 3.0). The tests use
it to compare goldgate's METEOR with NLTK's. Idempotent; exit 1 when the source is absent.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

SOURCE = Path("/usr/share/wordnet")
# WordNet 3.0's lexicographer files: number, name, syntactic category.
LEXNAMES = [
    ("adj.all", 3), ("adj.pert", 3), ("adv.all", 4), ("noun.Tops", 1), ("noun.act", 1),
    ("noun.animal", 1), ("noun.artifact", 1), ("noun.attribute", 1), ("noun.body", 1),
    ("noun.cognition", 1), ("noun.communication", 1), ("noun.event", 1), ("noun.feeling", 1),
    ("noun.food", 1), ("noun.group", 1), ("noun.location", 1), ("noun.motive", 1),
    ("noun.object", 1), ("noun.person", 1), ("noun.phenomenon", 1), ("noun.plant", 1),
    ("noun.possession", 1), ("noun.process", 1), ("noun.quantity", 1), ("noun.relation", 1),
    ("noun.shape", 1), ("noun.state", 1), ("noun.substance", 1), ("noun.time", 1),
    ("verb.body", 2), ("verb.change", 2), ("verb.cognition", 2), ("verb.communication", 2),
    ("verb.competition", 2), ("verb.consumption", 2), ("verb.contact", 2),
    ("verb.creation", 2), ("verb.emotion", 2), ("verb.motion", 2), ("verb.perception", 2),
    ("verb.possession", 2), ("verb.social", 2), ("verb.stative", 2), ("verb.weather", 2),
    ("adj.ppl", 3),
]  # fmt: skip


def main(target: str) -> int:
    if not (SOURCE / "data.noun").is_file():
        print(f"{SOURCE} has no WordNet (apt-get install wordnet-base wordnet-sense-index)")
        return 1
    corpus = Path(target) / "corpora" / "wordnet"
    corpus.mkdir(parents=True, exist_ok=True)
    for path in SOURCE.iterdir():
        if path.is_file() and not (corpus / path.name).exists():
            shutil.copyfile(path, corpus / path.name)
    lines = [f"{n:02d}\t{name}\t{pos}\n" for n, (name, pos) in enumerate(LEXNAMES)]
    (corpus / "lexnames").write_text("".join(lines), encoding="ascii")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
