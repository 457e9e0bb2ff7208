"""Retrieval keys: equal exactly for requests that would return the same hits."""

from __future__ import annotations

from ragq.orchestration.retrieval_keys import retrieval_key


def key(text: str, **changes: object) -> str:
    options: dict = {"collection": "kb", "acl": ["b", "a"], "top_k": 5, "source_version": "v1"}
    return retrieval_key(text, **(options | changes))


def test_the_query_counts_in_its_normal_form():
    assert key("What is the REFUND window?") == key("  what is the refund-window ")
    assert key("ｒｅｆｕｎｄ window") == key("refund window")
    assert key("refund window") != key("refund windows")


def test_every_other_part_of_the_request_counts_and_acl_order_does_not():
    base = key("refund window")
    assert key("refund window", acl=["a", "b", "a"]) == base
    for change in ({"collection": "other"}, {"acl": ["a"]}, {"acl": None}, {"top_k": 6},
                   {"source_version": "v2"}):
        assert key("refund window", **change) != base, change


def test_each_search_mode_has_its_own_key():
    """Sparse and hybrid rank other hits than dense: a dedup or cache hit across modes would
    hand one mode's evidence to another."""
    keys = {key("refund window", mode=m) for m in ("dense", "sparse", "hybrid-rrf", "hybrid-dbsf")}
    assert len(keys) == 4
    assert key("refund window") == key("refund window", mode="dense")


def test_a_new_key_version_leaves_every_earlier_cached_key_behind(monkeypatch):
    """Evidence cached by a version whose searches returned other hits is never looked up."""
    import ragq.orchestration.retrieval_keys as keys

    before = key("refund window")
    monkeypatch.setattr(keys, "KEY_VERSION", keys.KEY_VERSION + 1)
    assert key("refund window") != before
