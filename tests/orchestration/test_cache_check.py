"""The re-check of a cached evidence entry: ACL fingerprint, each chunk's ACL, current versions."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ragq.orchestration.cache_check import acl_fingerprint, evidence_entry, usable
from ragq.schemas.cache import CachedEvidence, CachedHit


def _hit(doc: str = "d1", chunk: str = "c1", version: str = "v1",
         acl: tuple[str, ...] = ("staff",)) -> CachedHit:
    return CachedHit(doc_id=doc, chunk_id=chunk, score=0.8, source_version=version,
                     authority_tier=1, title="Refunds", text="Refunds take 5 days.", acl=list(acl))


def test_the_fingerprint_ignores_order_and_repeats_but_not_labels() -> None:
    assert acl_fingerprint(["b", "a", "a"]) == acl_fingerprint(["a", "b"])
    assert acl_fingerprint(["a"]) != acl_fingerprint(["a", "b"])
    assert acl_fingerprint([]) != acl_fingerprint([""])


def test_an_entry_is_stamped_with_the_versions_of_its_documents() -> None:
    entry = evidence_entry([_hit("d1", "c1", "v1"), _hit("d2", "c2", "v7")],
                           requester_acl=["staff"], now_s=12.5)
    assert entry.source_versions == {"d1": "v1", "d2": "v7"}
    assert entry.acl_fingerprint == acl_fingerprint(["staff"])
    assert entry.cached_at_s == 12.5
    assert entry.doc_ids == ["d1", "d2"]


def test_a_fresh_entry_for_the_same_acl_is_usable() -> None:
    entry = evidence_entry([_hit()], requester_acl=["staff"])
    assert usable(entry, requester_acl=["staff"], current_versions={"d1": "v1"}) == (True,
                                                                                     "usable")


def test_an_entry_for_staff_is_not_usable_for_public_nor_the_reverse() -> None:
    staff = evidence_entry([_hit(acl=("staff", "public"))], requester_acl=["staff"])
    public = evidence_entry([_hit(acl=("staff", "public"))], requester_acl=["public"])
    ok, reason = usable(staff, requester_acl=["public"], current_versions={"d1": "v1"})
    assert not ok and reason.startswith("acl")
    ok, reason = usable(public, requester_acl=["staff"], current_versions={"d1": "v1"})
    assert not ok and reason.startswith("acl")
    # a superset of the labels is another ACL too: its hits could differ
    ok, _ = usable(staff, requester_acl=["staff", "public"], current_versions={"d1": "v1"})
    assert not ok


def test_every_chunk_acl_is_rechecked_even_when_fingerprints_match() -> None:
    forged = CachedEvidence(hits=[_hit("d1", "c1", acl=("staff",)),
                                  _hit("d2", "c9", acl=("legal",))],
                            acl_fingerprint=acl_fingerprint(["staff"]),
                            source_versions={"d1": "v1", "d2": "v1"})
    ok, reason = usable(forged, requester_acl=["staff"],
                        current_versions={"d1": "v1", "d2": "v1"})
    assert not ok
    assert reason.startswith("acl") and "c9" in reason and "d2" in reason


def test_a_changed_source_version_makes_it_stale() -> None:
    entry = evidence_entry([_hit("d1", "c1", "v1"), _hit("d2", "c2", "v1")],
                           requester_acl=["staff"])
    ok, reason = usable(entry, requester_acl=["staff"], current_versions={"d1": "v1", "d2": "v2"})
    assert (ok, reason) == (False, "stale: doc d2 v1 -> v2")


def test_a_deleted_document_makes_it_unusable() -> None:
    entry = evidence_entry([_hit("d1"), _hit("d2", "c2")], requester_acl=["staff"])
    ok, reason = usable(entry, requester_acl=["staff"], current_versions={"d1": "v1"})
    assert (ok, reason) == (False, "missing doc d2")


def test_a_hit_read_from_another_version_than_the_stamp_is_stale() -> None:
    entry = CachedEvidence(hits=[_hit("d1", "c1", "v1"), _hit("d1", "c2", "v2")],
                           acl_fingerprint=acl_fingerprint(["staff"]),
                           source_versions={"d1": "v2"})
    ok, reason = usable(entry, requester_acl=["staff"], current_versions={"d1": "v2"})
    assert not ok and reason.startswith("stale") and "c1" in reason


def test_an_empty_entry_is_never_reused() -> None:
    entry = evidence_entry([], requester_acl=["staff"])
    ok, reason = usable(entry, requester_acl=["staff"], current_versions={})
    assert not ok and reason.startswith("empty")


LABELS = st.sampled_from(["public", "staff", "legal", "hr"])
ACLS = st.lists(LABELS, max_size=3)


@given(cached_for=ACLS, requester=ACLS, chunk_acls=st.lists(ACLS, min_size=1, max_size=4))
def test_usable_only_for_the_same_acl_and_only_visible_chunks(
    cached_for: list[str], requester: list[str], chunk_acls: list[list[str]]
) -> None:
    hits = [_hit(f"d{i}", f"c{i}", acl=tuple(acl)) for i, acl in enumerate(chunk_acls)]
    entry = evidence_entry(hits, requester_acl=cached_for)
    current = {h.doc_id: "v1" for h in hits}
    ok, reason = usable(entry, requester_acl=requester, current_versions=current)
    same_acl = set(cached_for) == set(requester)
    visible = all(set(acl) & set(requester) for acl in chunk_acls)
    assert ok == (same_acl and visible)
    assert ok or reason.startswith("acl")
