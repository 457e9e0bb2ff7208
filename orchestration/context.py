"""Which evidence reaches the answer model, under the context-token budget (SPEC C11).

Duplicates go first (same chunk, or near-identical text from two documents), then evidence is
ranked by authority tier and score, and taken round-robin across sub-queries: every sub-query's
best item gets in before any sub-query's second best. Without that, one well-matched sub-query
fills the budget and the other hops of a multi-hop question never reach the answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ragq.orchestration.text import near_duplicate, term_overlap
from ragq.schemas.flow import Evidence

_PIECE = re.compile(r"\w+|[^\w\s]")

TokenCounter = Callable[[str], int]
LEXICAL_WEIGHT = 0.4  # cosine points one full lexical match is worth (measured on the benches)


def estimate_tokens(text: str) -> int:
    """An estimate of WordPiece/BPE tokens: one per punctuation mark, one per word of up to six
    characters and one more per further six. Good to ~15% on English prose; a real tokenizer
    can be passed to :func:`assemble_context` instead."""
    return sum(max(1, math.ceil(len(p) / 6)) for p in _PIECE.findall(text))


def _rank(item: Evidence) -> tuple[int, float]:
    return (item.authority_tier, -item.score)


def rerank_lexical(evidence: Sequence[Evidence], query: str, *,
                   weight: float = LEXICAL_WEIGHT) -> list[Evidence]:
    """Copies of ``evidence`` scored ``score + weight * term_overlap(query, title + text)``: a
    hybrid of the dense score and exact wording that costs no model call. Dense search alone
    misses exact identifiers and names ("max_tokens", "Karelia Suite"); the question's own
    words bring back the chunks that carry them."""
    return [
        item.model_copy(update={
            "score": item.score + weight * term_overlap(query, f"{item.title} {item.text}")})
        for item in evidence
    ]


def dedupe(evidence: Sequence[Evidence]) -> list[Evidence]:
    """Evidence without repeats, best first: one item per chunk_id (its best-ranked copy), and
    no item whose text nearly duplicates a better-ranked one."""
    kept: list[Evidence] = []
    seen: set[str] = set()
    for item in sorted(evidence, key=_rank):
        if item.chunk_id in seen or any(near_duplicate(item.text, k.text) for k in kept):
            continue
        seen.add(item.chunk_id)
        kept.append(item)
    return kept


def round_robin(evidence: Sequence[Evidence]) -> list[Evidence]:
    """``evidence`` (ranked) reordered so round r holds every sub-query's r-th best item; each
    round is ordered by tier and score. Items of no sub-query (None) form one group."""
    groups: dict[int | None, list[Evidence]] = {}
    for item in sorted(evidence, key=_rank):
        groups.setdefault(item.sub_query_index, []).append(item)
    depth = max((len(g) for g in groups.values()), default=0)
    out: list[Evidence] = []
    for r in range(depth):
        out.extend(sorted((g[r] for g in groups.values() if r < len(g)), key=_rank))
    return out


def assemble_context(
    evidence: Sequence[Evidence],
    *,
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
) -> list[Evidence]:
    """The evidence for the answer model, in final order, within ``max_tokens`` (as counted by
    ``count_tokens`` on each item's text) and at most ``max_items`` items.

    A first pass takes one chunk per document (a second chunk of a document already in the
    context waits), a second pass fills what budget is left with the waiting chunks in order.
    An item that does not fit is skipped and smaller later items may still get in, so the
    budget is used rather than abandoned at the first long chunk.
    """
    ordered = round_robin(dedupe(evidence))
    chosen: list[Evidence] = []
    used = 0
    docs: set[str] = set()
    waiting: list[Evidence] = []
    for item in ordered:
        if item.doc_id in docs:
            waiting.append(item)
            continue
        cost = count_tokens(item.text)
        if _fits(cost, len(chosen), used, max_tokens, max_items):
            chosen.append(item)
            used += cost
            docs.add(item.doc_id)
    for item in waiting:
        cost = count_tokens(item.text)
        if _fits(cost, len(chosen), used, max_tokens, max_items):
            chosen.append(item)
            used += cost
    return chosen


def _fits(cost: int, count: int, used: int, max_tokens: int, max_items: int | None) -> bool:
    """Whether one more item of ``cost`` tokens fits beside ``count`` items using ``used``."""
    if max_items is not None and count >= max_items:
        return False
    return used + cost <= max_tokens


def assemble_for_asks(
    evidence: Sequence[Evidence],
    *,
    asks: int,
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
) -> list[Evidence]:
    """A context fair to every ask of a ticket: each ask first gets an equal share of the
    tokens and items for its own evidence (:func:`assemble_context` within the share), then
    what is left goes to the best of the rest, whoever found it. One ask is
    :func:`assemble_context` itself."""
    if asks <= 1:
        return assemble_context(evidence, max_tokens=max_tokens, count_tokens=count_tokens,
                                max_items=max_items)
    share_items = max(1, max_items // asks) if max_items is not None else None
    chosen: list[Evidence] = []
    for ask in range(asks):
        mine = [e for e in evidence if e.ask_index == ask]
        chosen += assemble_context(mine, max_tokens=max_tokens // asks,
                                   count_tokens=count_tokens, max_items=share_items)
    taken = {e.chunk_id for e in chosen}
    used = sum(count_tokens(e.text) for e in chosen)
    rest = [e for e in evidence if e.chunk_id not in taken
            and not any(near_duplicate(e.text, c.text) for c in chosen)]
    left_items = None if max_items is None else max_items - len(chosen)
    if left_items is not None and left_items <= 0:
        return chosen
    return chosen + assemble_context(rest, max_tokens=max_tokens - used,
                                     count_tokens=count_tokens, max_items=left_items)
