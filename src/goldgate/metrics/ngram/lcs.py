"""Longest common subsequences for ROUGE-L, ROUGE-Lsum and ROUGE-W.

rouge-score fills an O(m·n) table of Python ints for every pair of texts. Here the table is
never built: the bit-parallel algorithm of Allison–Dix and Hyyrö (2004) keeps one row of the
table as a Python integer, one bit per column, and advances it a whole row at a time with four
big-integer operations. Bit ``j-1`` of the complemented row ``i`` is set exactly when
``t[i][j] = t[i][j-1] + 1``. Keeping those rows is enough to replay rouge-score's backtrack,
tie-breaks included, with O(1) big-integer operations per row (see ``lcs_indices``).

ROUGE-W's weighted LCS has no such structure (its cells are sums of ``k**w``), so it is a plain
dynamic programme with ROUGE-1.5.5's arithmetic and tie-breaks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def position_masks(tokens: Sequence[str]) -> dict[str, int]:
    """For every distinct token, the bitmask of its positions (bit j for ``tokens[j]``)."""
    masks: dict[str, int] = {}
    get = masks.get
    for position, token in enumerate(tokens):
        masks[token] = get(token, 0) | (1 << position)
    return masks


def lcs_length(masks: Mapping[str, int], length: int, other: Sequence[str]) -> int:
    """Length of the LCS of the text behind ``masks`` (``length`` tokens) and ``other``."""
    full = (1 << length) - 1
    row = full
    get = masks.get
    for token in other:
        match = get(token)
        if match:
            hit = row & match
            row = (row + hit) | (row - hit)
    return length - (row & full).bit_count()


def lcs_indices(
    ref: Sequence[str], cand: Sequence[str], cand_masks: Mapping[str, int]
) -> list[int]:
    """Indices into ``ref`` of the LCS that rouge-score's ``lcs_ind(ref, cand)`` reads out.

    rouge-score backtracks from the bottom-right cell: diagonal when the tokens are equal,
    left when ``t[i][j-1] > t[i-1][j]``, otherwise up. ``cand_masks`` is
    ``position_masks(cand)``.

    With ``g_i`` the growth bits of row i (bit b set when ``t[i][b+1] = t[i][b] + 1``) and
    ``d(j) = t[i][j] - t[i-1][j]`` (0 or 1), the left test at column j reads
    ``d(j-1) = 1 and g_{i-1} has no bit j-1``. ``d`` only changes at the bits of
    ``g_i ^ g_{i-1}``, rising where ``g_i`` is set, so ``d(j-1)`` is known from the highest
    such bit below j-1, and the run of left moves ends at the highest bit below j that is a
    match, a growth bit of the row above, or that last change of ``d``. Every row therefore
    costs O(1) big-integer operations.
    """
    n = len(cand)
    full = (1 << n) - 1
    row = full
    # Rows whose ref token does not occur in cand equal the row above, and the backtrack
    # always moves up through them, so only the other rows are kept.
    rows: list[tuple[int, int, int, int]] = []
    get = cand_masks.get
    for i, token in enumerate(ref):
        match = get(token)
        if match:
            above = ~row & full
            hit = row & match
            row = (row + hit) | (row - hit)
            rows.append((i, match, above, ~row & full))
    if not rows or not rows[-1][3]:
        return []
    out: list[int] = []
    j = n
    for i, match, above, here in reversed(rows):
        if not j:
            break
        b = j - 1
        if (match >> b) & 1:
            out.append(i)
            j = b
            continue
        if (above >> b) & 1:
            continue  # up
        below = (1 << b) - 1
        changes = (here ^ above) & below
        if not changes:
            continue  # d(j-1) = 0: up
        last_change = changes.bit_length() - 1
        if not (here >> last_change) & 1:
            continue  # d fell back to 0: up
        stop = max(((match | above) & below).bit_length() - 1, last_change)
        if (match >> stop) & 1:
            out.append(i)
            j = stop
        else:
            j = stop + 1
    out.reverse()
    return out


def wlcs_hit_mask(
    model: Sequence[str], peer: Sequence[str], weights: Sequence[float], hits: list[bool]
) -> None:
    """Mark in ``hits`` the ``model`` positions of ROUGE-1.5.5's weighted LCS with ``peer``.

    ``weights[k]`` is ``k ** w`` for k up to ``min(len(model), len(peer)) + 1``. The cell update
    ``c[i-1][j-1] + f(k+1) - f(k)`` and the tie-break (diagonal on equal tokens, else up when
    ``c[i-1][j] >= c[i][j-1]``, else left) follow the Perl script's ``wlcs_inner``/``markLCS``.
    """
    m = len(model)
    n = len(peer)
    if not m or not n:
        return
    diagonal, up, left = 0, 1, 2
    moves: list[bytearray] = [bytearray(n + 1)]
    previous_c = [0.0] * (n + 1)
    previous_run = [0] * (n + 1)
    for i in range(1, m + 1):
        token = model[i - 1]
        c = [0.0] * (n + 1)
        run = [0] * (n + 1)
        move = bytearray(n + 1)
        for j in range(1, n + 1):
            if token == peer[j - 1]:
                k = previous_run[j - 1]
                c[j] = previous_c[j - 1] + weights[k + 1] - weights[k]
                run[j] = k + 1
                move[j] = diagonal
            elif previous_c[j] >= c[j - 1]:
                c[j] = previous_c[j]
                move[j] = up
            else:
                c[j] = c[j - 1]
                move[j] = left
        moves.append(move)
        previous_c, previous_run = c, run
    i, j = m, n
    while i and j:
        step = moves[i][j]
        if step == diagonal:
            i -= 1
            j -= 1
            hits[i] = True
        elif step == up:
            i -= 1
        else:
            j -= 1
