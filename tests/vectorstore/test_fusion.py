"""The fusion rule on its own: what a fused score is, and how ties and missing sides are handled."""

from __future__ import annotations

import pytest

from ragq.vectorstore import ScoredPoint, TitleFusion


def scored(point_id: str, score: float) -> ScoredPoint:
    return ScoredPoint(point_id, score, {"doc_id": point_id})


def test_the_score_is_the_better_of_text_and_the_title_less_the_margin():
    fusion = TitleFusion(title_margin=0.1)
    assert fusion.score(0.5, 1.0) == pytest.approx(0.9)
    assert fusion.score(0.95, 1.0) == pytest.approx(0.95)
    assert fusion.score(0.5, 0.55) == pytest.approx(0.5)
    assert fusion.score(None, 0.8) == pytest.approx(0.7)
    assert fusion.score(0.3, None) == pytest.approx(0.3)
    with pytest.raises(ValueError, match="text or a title score"):
        fusion.score(None, None)


@pytest.mark.parametrize("margin", [-0.1, 2.5, float("nan")])
def test_a_margin_outside_the_cosine_range_is_refused(margin):
    with pytest.raises(ValueError, match=r"title_margin must be in \[0, 2\]"):
        TitleFusion(title_margin=margin)


def test_more_candidates_than_hits_are_fetched_per_vector():
    assert all(TitleFusion().candidates(k) > k for k in (1, 8, 100))


def test_fuse_merges_both_lists_by_id_keeps_raw_scores_and_cuts_at_top_k():
    fusion = TitleFusion(title_margin=0.0)
    text = [scored("a", 0.9), scored("b", 0.2), scored("c", 0.5)]
    title = [scored("b", 0.95), scored("a", 0.1), scored("d", 0.4)]
    hits = fusion.fuse(text, title, top_k=3)
    assert [(h.id, h.score, h.text_score, h.title_score) for h in hits] == [
        ("b", 0.95, 0.2, 0.95),
        ("a", 0.9, 0.9, 0.1),
        ("c", 0.5, 0.5, None),
    ]
    assert hits[0].payload == {"doc_id": "b"}
    assert fusion.fuse([], [scored("d", 0.4)], top_k=2)[0].payload == {"doc_id": "d"}


def test_equal_fused_scores_rank_by_text_then_id_so_adapters_agree():
    fusion = TitleFusion(title_margin=0.0)
    text = [scored("z", 0.3), scored("y", 0.6), scored("x", 0.6)]
    title = [scored("z", 0.8), scored("y", 0.8), scored("x", 0.8)]
    assert [h.id for h in fusion.fuse(text, title, top_k=3)] == ["x", "y", "z"]
