"""TER's edit count: sacrebleu 2.6's shift search and beam edit distance, with equal results.

sacrebleu (``lib_ter``) follows Tercom: greedily apply the word-block shift that lowers the
edit distance most, until none does; shifts cost one edit each. Its limits are kept exactly
(blocks of at most 10 words moved at most 50 positions, a beam of 25 cells around the
pseudo-diagonal of the edit matrix, 1,000 shift candidates per sentence, after which the
shift found in that round is dropped), and so are its tie-breaks: a lower distance first, then
the longer block, the earlier block, the earlier target; in a cell, match/substitution, then
deletion, then insertion.

It is faster for three reasons that do not change a result:

- every candidate shift shares the current hypothesis's edit-matrix rows up to its first
  moved word, so only the rows after it are computed (sacrebleu's prefix cache does the same
  through a trie);
- a candidate's distance is abandoned as soon as a row's minimum, a lower bound of the final
  distance, shows that it cannot beat the best candidate so far (which is all the search
  asks of it): most candidates stop after a few rows;
- matching blocks are found from the positions of each word in the reference instead of by
  comparing every pair of positions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

MAX_SHIFT_SIZE: Final = 10
MAX_SHIFT_DIST: Final = 50
BEAM_WIDTH: Final = 25
MAX_SHIFT_CANDIDATES: Final = 1000
_INF: Final = 10**16  # sacrebleu's int(1e16)

# Operations, in sacrebleu's spelling; the trace rewrites the hypothesis into the reference.
_NOP, _SUB, _INS, _DEL, _UNDEF = " ", "s", "i", "d", "x"


def edit_count(hyp: Sequence[str], ref: Sequence[str]) -> int:
    """sacrebleu's ``translation_edit_rate(hyp, ref)[0]``: shifts plus the edit distance."""
    if not ref:
        return len(hyp)
    return _Search(list(hyp), list(ref)).run()


class _Search:
    """The shift search of one hypothesis against one reference."""

    def __init__(self, hyp: list[str], ref: list[str]) -> None:
        self.hyp = hyp
        self.ref = ref
        n, m = len(hyp), len(ref)
        self.n, self.m = n, m
        # Every hypothesis in the search has n words, so the band of each row is fixed.
        ratio = m / n if hyp else 1
        beam = math.ceil(ratio / 2 + BEAM_WIDTH) if ratio / 2 > BEAM_WIDTH else BEAM_WIDTH
        bands = [(0, m + 1)]
        for i in range(1, n + 1):
            diag = math.floor(i * ratio)
            high = m + 1 if i == n else min(m + 1, diag + beam)
            bands.append((max(0, diag - beam), high))
        self.bands = bands
        # A path through a cell outside the band costs at least 2 * (beam - 2) - |n - m|
        # (its length difference to the cell plus that from the cell to the end; the 2 covers
        # the rounding of the band's centre), so a plain edit distance below that is the beam
        # distance too: its best path never leaves the band.
        self.safe = 2 * (beam - 2) - abs(n - m) - 1
        positions: dict[str, list[int]] = {}
        for index, word in enumerate(ref):
            positions.setdefault(word, []).append(index)
        self.positions = positions
        # Bit masks of each reference word's positions, for the bit-parallel distance.
        self.peq = {word: sum(1 << k for k in where) for word, where in positions.items()}
        self.mask = (1 << m) - 1
        self.top = 1 << (m - 1)

    def run(self) -> int:
        words = self.hyp
        rows: list[list[int]] = [list(range(self.m + 1))]
        states: list[tuple[int, int, int]] = [(self.mask, 0, self.m)]
        shifts = 0
        checked = 0
        while True:
            self._extend(words, rows, states)
            distance = rows[-1][self.m]
            gain, shifted, first, checked = self._best_shift(words, rows, states, distance, checked)
            if checked >= MAX_SHIFT_CANDIDATES or gain <= 0:
                return shifts + distance
            shifts += 1
            words = shifted
            # The shifted words keep the first `first` words: so do their rows.
            del rows[first + 1 :]
            del states[first + 1 :]

    # -- edit distances -------------------------------------------------------------------------

    def _extend(
        self, words: list[str], rows: list[list[int]], states: list[tuple[int, int, int]]
    ) -> None:
        """Complete the beam matrix rows and bit-parallel states of ``words``."""
        for i in range(len(rows), self.n + 1):
            rows.append(self._row(rows[-1], words[i - 1], i))
        for i in range(len(states), self.n + 1):
            states.append(self._step(states[-1], words[i - 1]))

    def _row(self, prev: list[int], word: str, i: int) -> list[int]:
        """Row ``i`` of the beam edit matrix from row ``i - 1``, for hypothesis word ``word``.

        Each cell takes the first of match/substitution, deletion, insertion that is cheapest
        (sacrebleu's strict ``>`` updates); outside the beam it stays infinite.
        """
        ref = self.ref
        low, high = self.bands[i]
        cur = [_INF] * (self.m + 1)
        if low == 0:
            cur[0] = prev[0] + 1
            low = 1
        left = cur[low - 1]
        for j in range(low, high):
            best = prev[j - 1] if ref[j - 1] == word else prev[j - 1] + 1
            if best > _INF:
                best = _INF
            up = prev[j] + 1
            if up < best:
                best = up
            left += 1
            if left < best:
                best = left
            cur[j] = left = best
        return cur

    def _step(self, state: tuple[int, int, int], word: str) -> tuple[int, int, int]:
        """One hypothesis word of Hyyro's bit-parallel Levenshtein distance (no beam)."""
        pv, mv, score = state
        mask = self.mask
        eq = self.peq.get(word, 0)
        xv = eq | mv
        xh = (((eq & pv) + pv) ^ pv) | eq
        ph = mv | (~(xh | pv) & mask)
        mh = pv & xh
        if ph & self.top:
            score += 1
        elif mh & self.top:
            score -= 1
        ph = ((ph << 1) | 1) & mask
        mh = (mh << 1) & mask
        return mh | (~(xv | ph) & mask), ph & xv, score

    def _plain_distance(
        self, words: list[str], start: int, states: list[tuple[int, int, int]]
    ) -> int:
        """The edit distance without a beam, from the state after the first ``start`` words."""
        pv, mv, score = states[start]
        mask, top, peq = self.mask, self.top, self.peq
        for word in words[start:]:
            eq = peq.get(word, 0)
            xv = eq | mv
            xh = (((eq & pv) + pv) ^ pv) | eq
            ph = mv | (~(xh | pv) & mask)
            mh = pv & xh
            if ph & top:
                score += 1
            elif mh & top:
                score -= 1
            ph = ((ph << 1) | 1) & mask
            mh = (mh << 1) & mask
            pv = mh | (~(xv | ph) & mask)
            mv = ph & xv
        return score

    def _beam_distance(
        self, words: list[str], start: int, rows: list[list[int]], limit: int
    ) -> int:
        """The beam edit distance of ``words`` if it is at most ``limit``, else ``limit + 1``.

        ``rows[:start + 1]`` are the rows of a hypothesis with the same first ``start`` words.
        A row's minimum is a lower bound of the distance, so a hopeless candidate stops early.
        """
        prev = rows[start]
        for i in range(start + 1, self.n + 1):
            prev = self._row(prev, words[i - 1], i)
            if min(prev) > limit:
                return limit + 1
        return prev[self.m] if prev[self.m] <= limit else limit + 1

    def _distance_within(
        self,
        words: list[str],
        start: int,
        rows: list[list[int]],
        states: list[tuple[int, int, int]],
        limit: int,
    ) -> int:
        """The beam distance of ``words`` if at most ``limit``, else ``limit + 1``."""
        plain = self._plain_distance(words, start, states)
        if plain > limit:
            return limit + 1  # the beam only ever adds to the distance
        if plain <= self.safe:
            return plain
        return self._beam_distance(words, start, rows, limit)

    # -- the shift search -----------------------------------------------------------------------

    def _best_shift(
        self,
        words: list[str],
        rows: list[list[int]],
        states: list[tuple[int, int, int]],
        distance: int,
        checked: int,
    ) -> tuple[int, list[str], int, int]:
        """sacrebleu's ``_shift``: the best shift's gain and words, their common prefix with
        ``words``, and the candidates seen so far."""
        align, ref_err, hyp_err = self._alignment(words, rows)
        hyp_err_sum = [0]
        for err in hyp_err:
            hyp_err_sum.append(hyp_err_sum[-1] + err)
        ref_err_sum = [0]
        for err in ref_err:
            ref_err_sum.append(ref_err_sum[-1] + err)
        n, m, ref = self.n, self.m, self.ref

        best_gain = 0  # only a shift that lowers the distance is ever applied
        best_key: tuple[int, int, int] | None = None
        best_words = words
        best_first = n
        for start_h in range(n):
            for start_r in self.positions.get(words[start_h], ()):
                if abs(start_r - start_h) > MAX_SHIFT_DIST:
                    continue
                length = 0
                while words[start_h + length] == ref[start_r + length] and length < MAX_SHIFT_SIZE:
                    length += 1
                    if (
                        hyp_err_sum[start_h + length] != hyp_err_sum[start_h]
                        and ref_err_sum[start_r + length] != ref_err_sum[start_r]
                        and not start_h <= align[start_r] < start_h + length
                    ):
                        prev_idx = -1
                        for offset in range(-1, length):
                            if start_r + offset == -1:
                                idx = 0
                            elif start_r + offset in align:
                                idx = align[start_r + offset] + 1
                            else:
                                break
                            if idx == prev_idx:
                                continue
                            prev_idx = idx
                            checked += 1
                            key = (length, -start_h, -idx)
                            # The candidate must beat (gain, key) of the best so far, and
                            # the first one must lower the distance at all.
                            if best_key is not None and key > best_key:
                                limit = distance - best_gain
                            else:
                                limit = distance - best_gain - 1
                            if limit < 0:
                                continue
                            shifted = _perform_shift(words, start_h, length, idx)
                            first = min(start_h, idx)
                            while first < n and shifted[first] == words[first]:
                                first += 1
                            found = self._distance_within(shifted, first, rows, states, limit)
                            if found <= limit:
                                best_gain, best_key = distance - found, key
                                best_words, best_first = shifted, first
                        if checked >= MAX_SHIFT_CANDIDATES:
                            return best_gain, best_words, best_first, checked
                    if n == start_h + length or m == start_r + length:
                        break
        return best_gain, best_words, best_first, checked

    def _alignment(
        self, words: list[str], rows: list[list[int]]
    ) -> tuple[dict[int, int], list[int], list[int]]:
        """sacrebleu's ``trace_to_alignment`` of the flipped trace of the matrix's best path.

        Each cell's operation is the first of match/substitution, deletion, insertion whose
        cost equals the cell's: what sacrebleu's strict ``>`` updates leave in the cell.
        """
        ref = self.ref
        trace: list[str] = []
        i, j = self.n, self.m
        while i > 0 or j > 0:
            if i == 0:
                op = _INS
            elif j == 0:
                op = _DEL if rows[i][0] < _INF else _UNDEF
            else:
                value, prev = rows[i][j], rows[i - 1]
                match = ref[j - 1] == words[i - 1]
                if value >= _INF:
                    op = _UNDEF
                elif prev[j - 1] + (0 if match else 1) == value:
                    op = _NOP if match else _SUB
                elif prev[j] + 1 == value:
                    op = _DEL
                else:
                    op = _INS
            trace.append(op)
            if op in (_SUB, _NOP):
                i -= 1
                j -= 1
            elif op == _INS:
                j -= 1
            elif op == _DEL:
                i -= 1
            else:
                raise RuntimeError(f"TER: unknown edit operation {op!r}")
        trace.reverse()
        pos_hyp = pos_ref = -1
        hyp_err: list[int] = []
        ref_err: list[int] = []
        align: dict[int, int] = {}
        # Flipped: the matrix's insertion is a deletion of the reference→hypothesis rewrite.
        for op in trace:
            if op in (_NOP, _SUB):
                pos_hyp += 1
                pos_ref += 1
                align[pos_ref] = pos_hyp
                err = 0 if op == _NOP else 1
                hyp_err.append(err)
                ref_err.append(err)
            elif op == _DEL:  # flipped: an insertion
                pos_hyp += 1
                hyp_err.append(1)
            else:  # _INS, flipped: a deletion
                pos_ref += 1
                align[pos_ref] = pos_hyp
                ref_err.append(1)
        return align, ref_err, hyp_err


def _perform_shift(words: list[str], start: int, length: int, target: int) -> list[str]:
    """sacrebleu's ``_perform_shift``: move ``words[start:start + length]`` before ``target``."""
    if target < start:
        return (
            words[:target]
            + words[start : start + length]
            + words[target:start]
            + words[start + length :]
        )
    if target > start + length:
        return (
            words[:start]
            + words[start + length : target]
            + words[start : start + length]
            + words[target:]
        )
    return (
        words[:start]
        + words[start + length : length + target]
        + words[start : start + length]
        + words[length + target :]
    )
