import math
import re

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.context import (
    ANSWERED_HOP_PENALTY,
    REPEATED_TITLE_PENALTY,
    assemble_context,
    estimate_tokens,
    yield_answered_hops,
    yield_repeated_titles,
)
from ragq.schemas.flow import Evidence


def ev(cid, score, sq=0, tier=2, text=None, doc=None):
    return Evidence(chunk_id=cid, doc_id=doc or cid.split(":")[0], text=text or f"text of {cid}",
                    score=score, sub_query_index=sq, authority_tier=tier)


def titled(cid, score, sq, title):
    return Evidence(chunk_id=cid, doc_id=cid.split(":")[0], title=title, text=f"text of {cid}",
                    score=score, sub_query_index=sq)


def words(n):
    return " ".join(f"w{i}" for i in range(n))


def test_each_sub_query_best_gets_in_before_any_second_best():
    evidence = [ev("a:1", 0.9, 0), ev("a:2", 0.85, 0), ev("a:3", 0.8, 0), ev("b:1", 0.4, 1),
                ev("c:1", 0.3, 2)]
    chosen = assemble_context(evidence, max_tokens=10_000, max_items=3)
    assert [e.chunk_id for e in chosen] == ["a:1", "b:1", "c:1"]


def test_duplicate_chunks_and_near_identical_texts_are_dropped():
    same = "Refunds are issued within 14 days of the request being received by support."
    evidence = [ev("a:1", 0.5, 0), ev("a:1", 0.9, 1), ev("x:1", 0.7, 0, text=same),
                ev("y:1", 0.6, 1, text=same + " ")]
    chosen = assemble_context(evidence, max_tokens=10_000)
    ids = [e.chunk_id for e in chosen]
    assert ids.count("a:1") == 1 and "y:1" not in ids
    assert next(e for e in chosen if e.chunk_id == "a:1").score == 0.9


def test_authority_tier_outranks_score():
    chosen = assemble_context([ev("a:1", 0.9, 0, tier=3), ev("b:1", 0.2, 0, tier=1)],
                              max_tokens=10_000)
    assert [e.chunk_id for e in chosen] == ["b:1", "a:1"]


def test_token_budget_is_respected_and_smaller_items_still_fit():
    evidence = [ev("a:1", 0.9, text=words(50)), ev("b:1", 0.8, 1, text=words(200)),
                ev("c:1", 0.7, 2, text=words(30))]
    chosen = assemble_context(evidence, max_tokens=100, count_tokens=lambda t: len(t.split()))
    assert [e.chunk_id for e in chosen] == ["a:1", "c:1"]


def test_estimate_counts_long_words_as_several_pieces():
    assert estimate_tokens("a b c") == 3
    assert estimate_tokens("internationalisation") == 4
    assert estimate_tokens("Hi, there.") == 4


@given(st.text(max_size=300))
def test_estimate_is_one_token_per_piece_and_one_more_per_further_six_characters(text):
    assert estimate_tokens(text) == sum(max(1, math.ceil(len(p) / 6))
                                        for p in re.findall(r"\w+|[^\w\s]", text))


def test_second_chunk_of_a_document_waits_for_other_documents():
    evidence = [ev("a:1", 0.9, 0, doc="a"), ev("a:2", 0.8, 0, doc="a"), ev("b:1", 0.3, 0)]
    chosen = assemble_context(evidence, max_tokens=10_000, max_items=2)
    assert [e.chunk_id for e in chosen] == ["a:1", "b:1"]


def test_a_chunk_longer_than_its_share_enters_as_an_excerpt_and_leaves_room_for_others():
    filler = " ".join(f"Line {i} of the pasted payload shows field_{i} set to value {i}."
                      for i in range(60))
    answer = "The index field names the content block that each delta extends."
    long_chunk = ev("big:1", 0.9, 0, text=f"{filler} {answer} {filler}")
    others = [ev(f"d{i}:1", 0.8 - i / 100, i + 1, text=" ".join(f"d{i}w{j}" for j in range(40)))
              for i in range(5)]
    count = estimate_tokens
    chosen = assemble_context([long_chunk, *others], max_tokens=400, max_items=6,
                              count_tokens=count,
                              focus="What does the index field of a delta name?")
    assert {e.doc_id for e in chosen} == {"big", "d0", "d1", "d2", "d3", "d4"}
    assert sum(count(e.text) for e in chosen) <= 400
    cut = next(e for e in chosen if e.doc_id == "big")
    assert answer in cut.text and count(cut.text) <= 400 * 4 // 3 // 6


def test_a_follow_up_rounds_best_item_gets_no_reserved_place():
    evidence = [ev("a:1", 0.9, 0), ev("a:2", 0.85, 0, doc="a2"), ev("f:1", 0.3, 1000),
                ev("b:1", 0.5, 1)]
    chosen = assemble_context(evidence, max_tokens=10_000, max_items=3)
    assert [e.chunk_id for e in chosen] == ["a:1", "b:1", "a:2"]


def test_an_answered_hops_further_hits_yield_to_another_hops_hits_of_nearly_their_score():
    evidence = [ev("a:1", 0.9, 0), ev("a:2", 0.85, 0, doc="a2"), ev("a:3", 0.84, 0, doc="a3"),
                ev("c:1", 0.84, 2), ev("c:2", 0.83, 2, doc="c2"), ev("b:1", 0.7, 1)]
    plain = assemble_context(evidence, max_tokens=10_000, max_items=4)
    assert [e.chunk_id for e in plain] == ["a:1", "c:1", "b:1", "a:2"]
    answered = yield_answered_hops(evidence, {0: "the harbour of Tern Island"})
    chosen = assemble_context(answered, max_tokens=10_000, max_items=4)
    assert [e.chunk_id for e in chosen] == ["a:1", "c:1", "b:1", "c:2"]


def test_an_answered_hop_keeps_its_best_hit_and_the_hits_whose_title_it_names():
    evidence = [ev("x:1", 0.9, 0), ev("x:1", 0.9, 1), ev("x:2", 0.8, 0),
                titled("x:3", 0.7, 0, "Marrow Pike"), titled("x:4", 0.65, 0, "Pike"),
                ev("y:1", 0.6, 1), ev("y:2", 0.5, 1)]
    asked = {0: "the river where Marrow Pike's pike live"}
    scores = [(e.chunk_id, e.sub_query_index, e.score)
              for e in yield_answered_hops(evidence, asked)]
    assert scores == [("x:1", 0, 0.9), ("x:1", 1, 0.9), ("x:2", 0, 0.8 - ANSWERED_HOP_PENALTY),
                      ("x:3", 0, 0.7), ("x:4", 0, 0.65), ("y:1", 1, 0.6), ("y:2", 1, 0.5)]


def test_an_answered_hops_reserved_place_goes_to_a_document_no_other_finder_places():
    # hop 1's best is the whole question's too, its runner-up a follow-up's: neither needs it
    evidence = [ev("r:1", 0.95, 0), ev("s:1", 0.9, 2), ev("s:1", 0.9, 1), ev("t:1", 0.7, 1),
                ev("t:1", 0.7, 1000), ev("h:1", 0.4, 1), ev("w:1", 0.65, 2)]
    plain = assemble_context(evidence, max_tokens=10_000, max_items=4)
    assert "h:1" not in [e.chunk_id for e in plain]
    answered = yield_answered_hops(evidence, {1: "the ferry to Skerra"})
    chosen = assemble_context(answered, max_tokens=10_000, max_items=4)
    assert [e.chunk_id for e in chosen] == ["r:1", "s:1", "h:1", "t:1"]



def test_only_the_best_paragraph_of_a_title_keeps_its_score():
    evidence = [titled("p1:0", 0.7, 0, "Tern Island"), titled("p2:0", 0.9, 1, "Tern  island"),
                titled("p2:0", 0.6, 0, "Tern Island"), titled("q1:0", 0.5, 0, "Gull Bay"),
                ev("u:1", 0.4, 1), ev("u:2", 0.3, 1)]
    scores = [(e.chunk_id, e.score) for e in yield_repeated_titles(evidence)]
    assert scores == [("p1:0", 0.7 - REPEATED_TITLE_PENALTY), ("p2:0", 0.9), ("p2:0", 0.6),
                      ("q1:0", 0.5), ("u:1", 0.4), ("u:2", 0.3 - REPEATED_TITLE_PENALTY)]


def test_a_hop_whose_best_hit_is_a_second_paragraph_of_a_ranked_title_places_another_page():
    evidence = [titled("a:0", 0.95, 0, "Harbour Lights"), titled("b:0", 0.9, 2, "Tern Island"),
                titled("c:0", 0.6, 1, "Tern Island"), titled("d:0", 0.45, 1, "Gull Bay"),
                titled("e:0", 0.8, 2, "Seal Rock"), titled("f:0", 0.7, 2, "Puffin Cove")]
    plain = assemble_context(evidence, max_tokens=10_000, max_items=4)
    assert "d:0" not in [e.chunk_id for e in plain]
    chosen = assemble_context(yield_repeated_titles(evidence), max_tokens=10_000, max_items=4)
    assert [e.chunk_id for e in chosen] == ["a:0", "b:0", "d:0", "e:0"]
