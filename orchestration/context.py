"""Which evidence reaches the answer model, under the context-token budget (SPEC C11).

Duplicates go first (same chunk, or near-identical text from two documents), then evidence is
ranked by authority tier and score, every sub-query's best item first: without that, one
well-matched sub-query fills the budget and the other hops of a multi-hop question never reach
the answer. Past those, the best items win, whoever found them.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence

from ragq.orchestration.text import near_duplicate
from ragq.schemas.flow import Evidence

_PIECE = re.compile(r"\w+|[^\w\s]")

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """An estimate of WordPiece/BPE tokens: one per punctuation mark, one per word of up to six
    characters and one more per further six. Good to ~15% on English prose; a real tokenizer
    can be passed to :func:`assemble_context` instead."""
    return sum(max(1, math.ceil(len(p) / 6)) for p in _PIECE.findall(text))


def _rank(item: Evidence) -> tuple[int, float]:
    return (item.authority_tier, -item.score)



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


def every_hop_first(evidence: Sequence[Evidence]) -> list[Evidence]:
    """``evidence`` ordered so each sub-query's best item comes first (ranked among them by
    tier and score), then everything else by tier and score: every hop keeps a slot, and past
    that the strongest items win, whichever sub-query found them (a strict round-robin would
    give a weak sub-query's second item the place of a strong one's)."""
    ranked = sorted(evidence, key=_rank)
    firsts: dict[int | None, Evidence] = {}
    for item in ranked:
        firsts.setdefault(item.sub_query_index, item)
    head = sorted(firsts.values(), key=_rank)
    taken = {id(item) for item in head}
    return head + [item for item in ranked if id(item) not in taken]


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
    ordered = every_hop_first(dedupe(evidence))
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
