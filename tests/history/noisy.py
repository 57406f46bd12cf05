"""A seeded random system with known noise: question k is answered right with probability p_k.

Draws are keyed by (question, how many times it was asked), so a run's outputs do not depend
on the order in which concurrent calls happen, and run r of a process always gets the same.
"""

from __future__ import annotations

import random
import threading

import numpy as np

N = 300
SEED = 13
#: the probability that each question is answered right
P = np.random.default_rng(SEED).uniform(0.3, 0.95, N)

_asked: dict[int, int] = {}
_lock = threading.Lock()
_epoch = [0]


def reset(epoch: int = 0) -> None:
    """Start the draws again (``epoch`` gives another, independent sequence)."""
    with _lock:
        _asked.clear()
        _epoch[0] = epoch


def answer(question: str) -> str:
    """The system: right (``answer k``) with probability ``P[k]``, else ``wrong``."""
    k = int(question.rsplit(" ", 1)[1])
    with _lock:
        count = _asked.get(k, 0)
        _asked[k] = count + 1
        epoch = _epoch[0]
    draw = random.Random(f"{SEED}:{epoch}:{k}:{count}").random()
    return f"answer {k}" if draw < P[k] else "wrong"


def exact_false_alarm_rate(threshold: float) -> float:
    """P(score_j - score_i < -threshold) for two independent runs, computed exactly.

    A run's number of right answers is Poisson-binomial(P); the difference of two runs is
    the cross-correlation of that distribution with itself.
    """
    pmf = np.array([1.0])
    for p in P:
        pmf = np.convolve(pmf, [1 - p, p])
    difference = np.correlate(pmf, pmf, mode="full")  # P(A - B = k), k = -N..N
    points = np.arange(-N, N + 1) * 100 / N
    return float(difference[points < -threshold - 1e-9].sum())


def all_or_nothing(question: str) -> str:
    """Every answer right on even runs, every one wrong on odd runs (a run is N calls)."""
    k = int(question.rsplit(" ", 1)[1])
    with _lock:
        count = _asked.get(k, 0)
        _asked[k] = count + 1
    return f"answer {k}" if count % 2 == 0 else "wrong"
