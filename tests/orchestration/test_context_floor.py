"""The ticket's floor in the context: the whole-ticket ranking is one more ask, and the asks'
evidence and the floor take turns, so no side crowds another out."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.context import assemble_with_floor, estimate_tokens
from ragq.schemas.flow import Evidence


def ev(cid: str, score: float, ask: int | None = 0, words: int = 20) -> Evidence:
    text = f"{cid} " + " ".join(f"{cid}w{i}" for i in range(words))
    return Evidence(chunk_id=cid, doc_id=cid, text=text, score=score, source_version="v1",
                    sub_query_index=0, ask_index=ask)


def test_the_floors_best_items_get_in_however_strong_the_asks_evidence_is():
    asks = [ev(f"a{i}", 0.99 - i / 100) for i in range(10)]
    floor = [ev(f"f{i}", 0.1, ask=None) for i in range(10)]
    context = assemble_with_floor(asks, floor, asks=["one ask"], max_tokens=10_000, max_items=6)
    ids = [c.chunk_id for c in context]
    assert ids == ["a0", "f0", "a1", "f1", "a2", "f2"]


def test_an_item_both_sides_found_counts_once_and_leaves_room_for_the_next():
    asks = [ev("x", 0.9), ev("a1", 0.8), ev("a2", 0.7)]
    floor = [ev("x", 0.5, ask=None), ev("f1", 0.4, ask=None), ev("f2", 0.3, ask=None)]
    context = assemble_with_floor(asks, floor, asks=["q"], max_tokens=10_000, max_items=4)
    assert [c.chunk_id for c in context] == ["x", "a1", "f1", "a2"]


def test_without_a_floor_the_context_is_the_asks_own():
    asks = [ev(f"a{i}", 0.9 - i / 10) for i in range(5)]
    context = assemble_with_floor(asks, [], asks=["q"], max_tokens=10_000, max_items=3)
    assert [c.chunk_id for c in context] == ["a0", "a1", "a2"]


@given(st.integers(0, 12), st.integers(0, 12), st.integers(1, 10), st.integers(50, 2000))
def test_the_context_keeps_its_limits_and_half_its_room_for_the_floor(n_asks, n_floor, items,
                                                                     tokens):
    asks = [ev(f"a{i}", 1.0 - i / 100) for i in range(n_asks)]
    floor = [ev(f"f{i}", 0.5, ask=None) for i in range(n_floor)]
    context = assemble_with_floor(asks, floor, asks=["q"], max_tokens=tokens, max_items=items)
    assert len(context) <= items
    assert sum(estimate_tokens(c.text) for c in context) <= tokens
    assert len({c.chunk_id for c in context}) == len(context)
    taken = sum(c.chunk_id.startswith("f") for c in context)
    # The floor is one more ask: with one ask of its own, every other place while it has
    # items, at least half of the context (rounded down), or all of the floor.
    assert taken >= min(n_floor, len(context) // 2)


def test_each_ask_and_the_floor_take_turns():
    evidence = [ev(f"a{i}", 0.9 - i / 10, ask=0) for i in range(4)] + \
        [ev(f"b{i}", 0.9 - i / 10, ask=1) for i in range(4)]
    floor = [ev(f"f{i}", 0.2, ask=None) for i in range(4)]
    context = assemble_with_floor(evidence, floor, asks=["one", "two"], max_tokens=10_000,
                                  max_items=6)
    assert [c.chunk_id for c in context] == ["a0", "b0", "f0", "a1", "b1", "f1"]


def test_a_second_chunk_of_a_page_waits_for_the_first_chunk_of_every_other_page():
    """The floor's runner-up is another chunk of the ask's best page: it waits, and the next
    page's first chunk takes its place (one chunk per document first, across the sides)."""
    page = [Evidence(chunk_id=f"p::{i}", doc_id="p", text=f"page p part {i} " * 5, score=0.9,
                     sub_query_index=0, ask_index=0) for i in range(2)]
    asks = [page[0], ev("a1", 0.8), ev("a2", 0.7)]
    floor = [ev("f0", 0.5, ask=None), page[1].model_copy(update={"ask_index": None}),
             ev("f2", 0.3, ask=None)]
    context = assemble_with_floor(asks, floor, asks=["q"], max_tokens=10_000, max_items=5)
    assert [c.chunk_id for c in context] == ["p::0", "f0", "a1", "a2", "f2"]
    roomy = assemble_with_floor(asks, floor, asks=["q"], max_tokens=10_000, max_items=6)
    assert roomy[-1].chunk_id == "p::1"  # with room, the second chunk still gets in, last
