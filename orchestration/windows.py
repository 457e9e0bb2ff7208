"""The whole ticket, searched whole: a long text cut into overlapping windows that an
embedding model reads entirely, and the windows' rankings fused into one.

A sentence embedder reads a bounded number of word pieces (MiniLM: 256) and drops the rest, so a
3,000-character ticket embedded as one query is searched by its first third. Each window here
is short enough to be read whole, the windows overlap so no sentence is only ever read cut in
two, and reciprocal-rank fusion merges their rankings without comparing scores of different
queries. The fused ranking is the job's floor: a plain search of everything the ticket says,
which context assembly always draws on next to the asks' own evidence.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from typing import TypeVar

#: The reason recorded on a window's sub-query; the flow tells window searches by it.
TICKET_WINDOW = "a window of the whole ticket, searched for the floor"

#: Words per window. English runs about 1.3 word pieces per word, so 160 words stay under the
#: 256 pieces a MiniLM-sized embedder reads, with room for numbers and names that split into
#: many pieces.
WINDOW_WORDS = 160
#: Words each window shares with the next: a need stated across a window's edge is read whole
#: by one of the two.
OVERLAP_WORDS = 40
#: Reciprocal-rank fusion's constant (Cormack et al. 2009): ranks 1 and 2 weigh nearly alike,
#: so agreement between windows counts for more than one window's order.
RRF_K = 60

Item = TypeVar("Item")


def ticket_windows(text: str, *, size: int = WINDOW_WORDS, overlap: int = OVERLAP_WORDS
                   ) -> list[str]:
    """``text`` as overlapping windows of at most ``size`` words (its whitespace-separated
    tokens, kept verbatim); a text of ``size`` words or fewer is one window, itself. Windows
    start every ``size - overlap`` words, and the last one ends with the text."""
    if not 0 <= overlap < size:
        raise ValueError(f"overlap {overlap} must be at least 0 and less than size {size}")
    tokens = text.split()
    if len(tokens) <= size:
        return [" ".join(tokens)] if tokens else []
    stride = size - overlap
    starts = [*range(0, len(tokens) - size, stride), len(tokens) - size]
    return [" ".join(tokens[s:s + size]) for s in dict.fromkeys(starts)]


def fuse_rankings(rankings: Sequence[Sequence[Item]], *,
                  id_of: Callable[[Item], Hashable] | None = None, k: int = RRF_K) -> list[Item]:
    """The items of ``rankings`` (each best first) ordered by reciprocal-rank fusion: an item's
    score is the sum over rankings of ``1 / (k + rank)``. ``id_of`` says when two items are the
    same (default: equality); the first ranking's copy of an item is kept. Ties keep the order in
    which items were first seen, so the fusion is deterministic."""
    ident: Callable[[Item], Hashable] = id_of or (lambda item: item)
    scores: dict[Hashable, float] = {}
    first: dict[Hashable, Item] = {}
    for ranking in rankings:
        seen: set[Hashable] = set()
        for rank, item in enumerate(ranking, start=1):
            name = ident(item)
            if name in seen:
                continue
            seen.add(name)
            first.setdefault(name, item)
            scores[name] = scores.get(name, 0.0) + 1.0 / (k + rank)
    order = {name: n for n, name in enumerate(first)}
    return [first[name] for name in sorted(first, key=lambda n: (-scores[n], order[n]))]

