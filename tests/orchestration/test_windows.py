"""The whole ticket searched whole: windows that cover every word, and rank fusion."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.windows import fuse_rankings, ticket_windows

texts = st.lists(st.from_regex(r"[a-z0-9]{1,8}", fullmatch=True), max_size=300).map(" ".join)


@given(texts, st.integers(2, 200), st.data())
def test_windows_cover_every_word_in_order_and_stay_within_size(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    windows = ticket_windows(text, size=size, overlap=overlap)
    tokens = text.split()
    assert all(len(w.split()) <= size for w in windows)
    if not tokens:
        assert windows == []
        return
    # Every word is read by some window, and the windows run from the first word to the last.
    assert windows[0].split()[0] == tokens[0] and windows[-1].split()[-1] == tokens[-1]
    covered = set()
    for w in windows:
        n = len(w.split())
        starts = [i for i in range(len(tokens) - n + 1) if tokens[i:i + n] == w.split()]
        assert starts, "a window is a run of the text's own words"
        covered |= set(range(starts[0], starts[0] + n)) if len(starts) == 1 else set()
    if len(set(tokens)) == len(tokens):  # positions are unambiguous
        assert covered == set(range(len(tokens)))


def test_a_short_text_is_one_window_and_a_long_one_overlaps():
    assert ticket_windows("how do refunds work") == ["how do refunds work"]
    words = [f"w{i}" for i in range(400)]
    windows = ticket_windows(" ".join(words), size=160, overlap=40)
    assert len(windows) == 3
    first, second = windows[0].split(), windows[1].split()
    assert first[-40:] == second[:40]


def test_an_overlap_not_below_the_size_is_refused():
    with pytest.raises(ValueError, match="overlap"):
        ticket_windows("a b c", size=3, overlap=3)


def test_fusion_rewards_agreement_between_rankings():
    # "b" is second in both rankings; "a" and "c" are each first in one and absent or last in
    # the other: agreement wins.
    fused = fuse_rankings([["a", "b", "x"], ["c", "b", "y"]])
    assert fused[0] == "b"
    assert set(fused) == {"a", "b", "c", "x", "y"}


def test_fusion_counts_an_item_once_per_ranking_and_keeps_the_first_copy():
    fused = fuse_rankings([[("k", 1), ("k", 2), ("j", 3)]], id_of=lambda item: item[0])
    assert fused == [("k", 1), ("j", 3)]


@given(st.lists(st.lists(st.integers(0, 20), max_size=15), max_size=6))
def test_fusion_is_a_permutation_of_the_distinct_items(rankings):
    fused = fuse_rankings(rankings)
    assert sorted(fused) == sorted({i for r in rankings for i in r})
