"""Cutting a long chunk down to the part that answers, so one chunk cannot spend the context
budget of several.

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
    kept = _choose(parts, order, max_tokens, _by_parts(parts, count_tokens))
    text = GAP.join(parts[j] for j in sorted(kept))
    if kept and count_tokens(text) > max_tokens:  # a counter that does not add up by parts
        kept = _choose(parts, order, max_tokens, lambda trial: count_tokens(
            GAP.join(parts[j] for j in trial)))
        text = GAP.join(parts[j] for j in sorted(kept))
    if not kept:
        text = _cut_words(parts[order[0]] if parts else item.text, max_tokens, count_tokens)
    return item.model_copy(update={"text": text})


def _choose(parts: list[str], order: list[int], max_tokens: int,
            cost: Callable[[list[int]], int]) -> list[int]:
    """The pieces kept, trying each in ``order`` once: kept when the pieces kept so far and it,
    joined in text order, cost at most ``max_tokens``."""
    kept: list[int] = []
    for i in order:
        if cost(sorted([*kept, i])) <= max_tokens:
            kept.append(i)
    return kept


def _by_parts(parts: list[str], count_tokens: TokenCounter) -> Callable[[list[int]], int]:
    """The tokens of pieces joined by :data:`GAP`, from each piece's own count: a piece with
    the gap after it, the last one alone.

    Counting every trial join whole made an excerpt quadratic in its pieces (a twentieth of a
    job's CPU). It adds up exactly for the BPE encodings' pre-tokenizers and for
    :func:`~ragq.orchestration.context.estimate_tokens`: a piece starts with no space and the
    gap ends in "…" and newlines, where the pre-tokenizer always splits, so a piece after a gap
    is cut as it is alone (what comes before the gap may merge with it: "." and "\n\n" are
    one token, so the gap is counted with the piece before it). :func:`excerpt` counts the
    result whole, and where it does not fit (a counter that does not add up by pieces) chooses
    again counting every trial join whole."""
    with_gap = [count_tokens(part + GAP) for part in parts[:-1]]
    alone = [count_tokens(part) for part in parts]

    def cost(trial: list[int]) -> int:
        return sum(with_gap[j] for j in trial[:-1]) + alone[trial[-1]]

    return cost


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
