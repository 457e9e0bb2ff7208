"""Which evidence reaches the answer model, under the context-token budget.

Duplicates go first (same chunk, or near-identical text from two documents), then evidence is
ranked by authority tier and score, every sub-query's best item first: without that, one
well-matched sub-query fills the budget and the other hops of a multi-hop question never reach
the answer. Past those, the best items win, whoever found them; a hop whose finding a later
hop searched with has done its work, and its further hits yield (:func:`yield_answered_hops`).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from itertools import zip_longest

from ragq.orchestration.excerpts import excerpt
from ragq.orchestration.text import content_words, near_duplicate, words
from ragq.schemas.flow import Evidence

_PIECE = re.compile(r"\w+|[^\w\s]")

TokenCounter = Callable[[str], int]


def estimate_tokens(text: str) -> int:
    """An estimate of WordPiece/BPE tokens: one per punctuation mark, one per word of up to six
    characters and one more per further six. Good to ~15% on English prose; a real tokenizer
    can be passed to :func:`assemble_context` instead."""
    pieces = _PIECE.findall(text)  # ceil(n / 6) is 1 + (n - 1) // 6: count the long ones only
    return len(pieces) + sum((len(p) - 1) // 6 for p in pieces if len(p) > 6)


def _rank(item: Evidence) -> tuple[int, float]:
    return (item.authority_tier, -item.score)


#: How many fair shares (``max_tokens / max_items``) of the budget one item may take before it
#: is cut to an excerpt: a chunk somewhat longer than the average passes whole, one that would
#: crowd out several others does not.
ITEM_SHARES = 4 / 3


def item_cap(max_tokens: int, max_items: int | None) -> int:
    """The most tokens one item of a context may take (see :data:`ITEM_SHARES`)."""
    if max_items is None:
        return max_tokens
    return max(1, min(max_tokens, int(max_tokens / max_items * ITEM_SHARES)))


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


#: Slots (``Evidence.sub_query_index`` in a pooled context) from here up group a verify round's
#: follow-ups, one slot per round (``JobState`` sets them); below are the plan's sub-queries.
FOLLOW_UP_SLOTS = 1000


def every_hop_first(evidence: Sequence[Evidence]) -> list[Evidence]:
    """``evidence`` ordered so each plan sub-query's best item comes first (ranked among them
    by tier and score), then everything else by tier and score: every hop of the plan keeps a
    slot, and past that the strongest items win, whichever sub-query found them (a strict
    round-robin would give a weak sub-query's second item the place of a strong one's). A
    verify round's follow-ups re-ask for what was missing and compete on score: a reserved
    slot gave their best item, often off the point, the place of a hop's second document."""
    ranked = sorted(evidence, key=_rank)
    firsts: dict[int | None, Evidence] = {}
    for item in ranked:
        if item.sub_query_index is None or item.sub_query_index < FOLLOW_UP_SLOTS:
            firsts.setdefault(item.sub_query_index, item)
    head = sorted(firsts.values(), key=_rank)
    taken = {id(item) for item in head}
    return head + [item for item in ranked if id(item) not in taken]


#: Score points an answered hop's further hits lose (see :func:`yield_answered_hops`): enough
#: to rank each below an equal copy another sub-query found and below the other hops' hits
#: of nearly its score, small beside the reranker's range (0.05 to 0.2 gave the same
#: contexts; 0.02 one question fewer all-gold on MuSiQue, 0.3 one fewer on HotpotQA).
ANSWERED_HOP_PENALTY = 0.05


def yield_answered_hops(evidence: Sequence[Evidence], answered: Mapping[int, str]
                        ) -> list[Evidence]:
    """``evidence`` with the further hits of each answered hop lowered by
    :data:`ANSWERED_HOP_PENALTY`; ``answered`` maps the slot (``sub_query_index``) of each hop
    whose finding a later hop searched with to the text it searched.

    Such a hop has done its work, and past its best hit the rest are runners-up of a question
    already answered (on MuSiQue 13% of its second hits are gold, 3-4% of its third and fourth,
    against 34% and 14% for the whole question's). Its best hit keeps its score, and so does
    a hit whose title the hop names (the page of the entity it asks about, where its bridge
    is read: "Signmark" for "the country Signmark is from"). A hit it shares keeps its place
    through the other finder's copy, and the hop's reserved first place
    (:func:`every_hop_first`) goes to a document the other finders do not place anyway."""
    by_slot: defaultdict[int | None, list[Evidence]] = defaultdict(list)
    seen: set[tuple[int | None, str]] = set()
    for item in sorted(evidence, key=_rank):
        if (item.sub_query_index, item.chunk_id) not in seen:
            seen.add((item.sub_query_index, item.chunk_id))
            by_slot[item.sub_query_index].append(item)
    kept: dict[int, set[str]] = {}
    for slot, searched in answered.items():
        ranked = by_slot.get(slot, [])
        kept[slot] = {e.chunk_id for e in ranked[:1]}
        kept[slot] |= {e.chunk_id for e in ranked if _names(searched, e.title)}
    return [item.model_copy(update={"score": item.score - ANSWERED_HOP_PENALTY})
            if item.sub_query_index in kept and item.chunk_id not in kept[item.sub_query_index]
            else item for item in evidence]


def _names(text: str, title: str) -> bool:
    """Whether ``text`` names ``title``: every content word of the title is a word of it."""
    wanted = content_words(title)
    return bool(wanted) and set(wanted) <= set(words(text))


#: Score points a further paragraph of an already ranked title loses (see
#: :func:`yield_repeated_titles`); 0.3 to 1.0 gave the same contexts, 0.2 one question fewer
#: all-gold on MuSiQue.
REPEATED_TITLE_PENALTY = 0.3


def yield_repeated_titles(evidence: Sequence[Evidence]) -> list[Evidence]:
    """``evidence`` with every chunk of a title (the document id where there is none) but its
    best-ranked one lowered by :data:`REPEATED_TITLE_PENALTY`.

    Corpora cut from an encyclopedia (MuSiQue, HotpotQA) store each paragraph of an article
    as a document of its own, under the article's title: a second paragraph of "Institute of
    technology" adds less than a first page of another, and a hop whose best hit is such a
    second paragraph gets its reserved place (:func:`every_hop_first`) for its next document
    instead (musique +1 question all-gold in context, the other sets unchanged). Waiting by
    title in :func:`assemble_context`'s first pass, as it waits by document, gained nothing:
    the reserved places were already taken."""
    best: dict[tuple[str, str], str] = {}
    for item in sorted(evidence, key=_rank):
        best.setdefault(_title_key(item), item.chunk_id)
    return [item if best[_title_key(item)] == item.chunk_id
            else item.model_copy(update={"score": item.score - REPEATED_TITLE_PENALTY})
            for item in evidence]


def _title_key(item: Evidence) -> tuple[str, str]:
    title = " ".join(item.title.casefold().split())
    return ("title", title) if title else ("doc", item.doc_id)


def assemble_context(
    evidence: Sequence[Evidence],
    *,
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
    focus: str = "",
) -> list[Evidence]:
    """The evidence for the answer model, in final order, within ``max_tokens`` (as counted by
    ``count_tokens`` on each item's text) and at most ``max_items`` items; an item longer than
    :func:`item_cap` enters as its excerpt most relevant to ``focus`` (the question).

    A first pass takes one chunk per document (a second chunk of a document already in the
    context waits), a second pass fills what budget is left with the waiting chunks in order.
    An item that does not fit is skipped and smaller later items may still get in, so the
    budget is used rather than abandoned at the first long chunk.
    """
    filling = _Filling(max_tokens, max_items, count_tokens, focus)
    docs: set[str] = set()
    waiting: list[Evidence] = []
    for item in every_hop_first(dedupe(evidence)):
        if item.doc_id in docs:
            waiting.append(item)
        elif filling.take(item):
            docs.add(item.doc_id)
    for item in waiting:
        filling.take(item)
    return filling.chosen


class _Filling:
    """A context being filled: the items taken so far and the tokens they cost. An item
    longer than :func:`item_cap` is taken as its excerpt most relevant to ``focus``."""

    def __init__(self, max_tokens: int, max_items: int | None, count_tokens: TokenCounter,
                 focus: str):
        self.max_tokens, self.max_items = max_tokens, max_items
        self.count_tokens, self.focus = count_tokens, focus
        self.cap = item_cap(max_tokens, max_items)
        self.chosen: list[Evidence] = []
        self.used = 0

    @property
    def full(self) -> bool:
        return self.max_items is not None and len(self.chosen) >= self.max_items

    def take(self, item: Evidence) -> bool:
        """Take ``item`` (or its excerpt) when it fits; whether it did."""
        if self.full:
            return False
        cost = self.count_tokens(item.text)
        if cost > self.cap:
            item = excerpt(item, focus=self.focus, max_tokens=self.cap,
                           count_tokens=self.count_tokens)
            cost = self.count_tokens(item.text)
        if self.used + cost > self.max_tokens:
            return False
        self.chosen.append(item)
        self.used += cost
        return True


def assemble_for_asks(
    evidence: Sequence[Evidence],
    *,
    asks: Sequence[str],
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
) -> list[Evidence]:
    """A context fair to every ask of a ticket (``asks``: their texts, or the question alone):
    each ask first gets an equal share of the tokens and items for its own evidence
    (:func:`assemble_context` within the share), then what is left goes to the best of the
    rest, whoever found it. One ask is :func:`assemble_context` itself."""
    if len(asks) <= 1:
        return assemble_context(evidence, max_tokens=max_tokens, count_tokens=count_tokens,
                                max_items=max_items, focus=asks[0] if asks else "")
    share_items = max(1, max_items // len(asks)) if max_items is not None else None
    chosen: list[Evidence] = []
    for index, ask in enumerate(asks):
        mine = [e for e in evidence if e.ask_index == index]
        chosen += assemble_context(mine, max_tokens=max_tokens // len(asks),
                                   count_tokens=count_tokens, max_items=share_items, focus=ask)
    taken = {e.chunk_id for e in chosen}
    used = sum(count_tokens(e.text) for e in chosen)
    rest = [e for e in evidence if e.chunk_id not in taken
            and not any(near_duplicate(e.text, c.text) for c in chosen)]
    left_items = None if max_items is None else max_items - len(chosen)
    if left_items is not None and left_items <= 0:
        return chosen
    return chosen + assemble_context(rest, max_tokens=max_tokens - used,
                                     count_tokens=count_tokens, max_items=left_items,
                                     focus=" ".join(asks))


def assemble_with_floor(
    evidence: Sequence[Evidence],
    floor: Sequence[Evidence],
    *,
    asks: Sequence[str],
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
) -> list[Evidence]:
    """A ticket's context with its ``floor`` (a plain search of its whole text, best first) as
    one more ask: each ask's own evidence (in :func:`assemble_context`'s order) and the floor
    take turns, one item each, skipping repeats, until the budget is spent; then the best of
    what is left. No side can crowd another out: whatever the asks' searches miss, the floor's
    best items are in, and the reverse. No floor: :func:`assemble_for_asks`."""
    if not floor:
        return assemble_for_asks(evidence, asks=asks, max_tokens=max_tokens,
                                 count_tokens=count_tokens, max_items=max_items)
    sides = [assemble_context([e for e in evidence if e.ask_index == index],
                              max_tokens=max_tokens, count_tokens=count_tokens,
                              max_items=max_items, focus=ask)
             for index, ask in enumerate(asks)] if len(asks) > 1 else \
        [assemble_context(evidence, max_tokens=max_tokens, count_tokens=count_tokens,
                          max_items=max_items, focus=asks[0] if asks else "")]
    sides.append(list(floor))
    turns = [item for row in zip_longest(*sides) for item in row if item is not None]
    rest = assemble_context(evidence, max_tokens=max_tokens, count_tokens=count_tokens,
                            focus=" ".join(asks))
    return fill_in_order(one_per_document_first([*turns, *rest]), max_tokens=max_tokens,
                         count_tokens=count_tokens, max_items=max_items, focus=" ".join(asks))


def one_per_document_first(evidence: Sequence[Evidence]) -> list[Evidence]:
    """``evidence`` with each document's first chunk in its place and every further chunk of a
    document moved behind them all, in order: :func:`assemble_context`'s first pass, across
    the sides of a ticket's context. A second chunk of a page the context already holds (found
    by another ask, or by the floor) waits for the first chunk of every other page."""
    seen: set[str] = set()
    first: list[Evidence] = []
    later: list[Evidence] = []
    for item in evidence:
        (later if item.doc_id in seen else first).append(item)
        seen.add(item.doc_id)
    return first + later


def fill_in_order(
    evidence: Sequence[Evidence],
    *,
    max_tokens: int,
    count_tokens: TokenCounter = estimate_tokens,
    max_items: int | None = None,
    focus: str = "",
) -> list[Evidence]:
    """``evidence`` in its own order, without repeats (the same chunk, or a near-identical
    text), within ``max_tokens`` and ``max_items``: an item longer than :func:`item_cap`
    enters as its excerpt, one that does not fit is passed over for smaller later ones.

    A chunk found for two asks of a ticket enters once, shared (``ask_index`` None: every
    ask's answer reads it), not once per ask: a copy per ask spends a place of the context on
    a document it already holds."""
    filling = _Filling(max_tokens, max_items, count_tokens, focus)
    chosen = filling.chosen
    for item in evidence:
        if filling.full:
            break
        same = next((n for n, c in enumerate(chosen) if item.chunk_id == c.chunk_id
                     or near_duplicate(item.text, c.text)), None)
        if same is not None:
            if chosen[same].ask_index != item.ask_index:
                chosen[same] = chosen[same].model_copy(update={"ask_index": None})
            continue
        filling.take(item)
    return chosen
