"""Cutting a long chunk down to the part that answers, so one chunk cannot spend the context
budget of several (SPEC C11).

Chunks are cut by words at ingest, but their token counts differ by an order of magnitude: a
chunk of pasted JSON or code costs several times a chunk of prose of the same words. Without a
cap, one such chunk (seen: 1,320 of a 1,500-token budget) leaves no room for the other documents
a question needs. A chunk over its cap keeps its sentences (or lines) that share most words
with the question, in their original order, with a line "…" between: what a reader would
highlight.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragq.orchestration.text import term_overlap
from ragq.schemas.flow import Evidence

TokenCounter = Callable[[str], int]

_BREAK = re.compile(r"(?<=[.!?])\s+|\n")
GAP = "\n\n…\n\n"
CUT = " …"


def pieces(text: str) -> list[str]:
    """Sentences and lines of ``text`` (a line of code or a table row is a piece of its own),
    stripped, empty ones dropped."""
    return [p.strip() for p in _BREAK.split(text) if p.strip()]


def excerpt(item: Evidence, *, focus: str, max_tokens: int, count_tokens: TokenCounter
            ) -> Evidence:
    """``item`` when its text fits ``max_tokens``; else a copy whose text is its pieces most
    relevant to ``focus`` (term overlap; earlier pieces first on ties), in text order, within
    ``max_tokens``. A first piece that alone is too long is cut by words."""
    if count_tokens(item.text) <= max_tokens:
        return item
    parts = pieces(item.text)
    order = sorted(range(len(parts)), key=lambda i: (-term_overlap(focus, parts[i]), i))
    kept: list[int] = []
    for i in order:
        trial = GAP.join(parts[j] for j in sorted([*kept, i]))
        if count_tokens(trial) <= max_tokens:
            kept.append(i)
    text = GAP.join(parts[j] for j in sorted(kept)) if kept else \
        _cut_words(parts[order[0]] if parts else item.text, max_tokens, count_tokens)
    return item.model_copy(update={"text": text})


def _cut_words(text: str, max_tokens: int, count_tokens: TokenCounter) -> str:
    """The longest run of ``text``'s first words (plus :data:`CUT`) within ``max_tokens``."""
    tokens = text.split()
    low, high = 0, len(tokens)
    while low < high:
        mid = (low + high + 1) // 2
        if count_tokens(" ".join(tokens[:mid]) + CUT) <= max_tokens:
            low = mid
        else:
            high = mid - 1
    return " ".join(tokens[:low]) + CUT
