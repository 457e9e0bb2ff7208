"""Ingest through the real workers: idempotent re-ingest, version replacement, bad lines, ACL."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ragq.ingestion.submit import ingest_path
from ragq.schemas.tasks import Task

COUNT = Task.COUNT
SEARCH = Task.SEARCH
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "docs"


def write_jsonl(path: Path, docs: list[dict]) -> Path:
    path.write_text("".join(json.dumps(d) + "\n" for d in docs))
    return path


def long_text(topic: str, sentences: int) -> str:
    return " ".join(f"Sentence {i} explains {topic} in detail, part {i}." for i in range(sentences))


def test_ingesting_the_same_folder_twice_leaves_the_same_points(stack, collection):
    first = ingest_path(stack.settings, EXAMPLES, collection=collection)
    points = stack.call(COUNT, collection)
    assert first.counts["new"] == first.documents == 10
    assert points == first.counts["chunks"] >= 10
    second = ingest_path(stack.settings, EXAMPLES, collection=collection)
    assert second.counts["skip"] == 10 and second.counts["chunks"] == 0
    assert stack.call(COUNT, collection) == points


def test_a_new_source_version_replaces_the_old_chunks(stack, collection, tmp_path):
    v1 = {"id": "guide", "title": "Guide", "text": long_text("the old installer", 120),
          "source_version": "v1"}
    other = {"id": "other", "title": "Other", "text": "Unrelated text about gardening."}
    ingest_path(stack.settings, write_jsonl(tmp_path / "a.jsonl", [v1, other]),
                collection=collection)
    assert stack.call(COUNT, collection, "guide", "v1") >= 3
    v2 = {**v1, "text": "The new installer runs in one step.", "source_version": "v2"}
    report = ingest_path(stack.settings, write_jsonl(tmp_path / "b.jsonl", [v2, other]),
                         collection=collection)
    assert report.counts["replace"] == 1 and report.counts["skip"] == 1
    assert stack.call(COUNT, collection, "guide", "v1") == 0
    assert stack.call(COUNT, collection, "guide") == 1
    assert stack.call(COUNT, collection, "other") == 1
    hits = stack.call(SEARCH, collection, "installer", 1, ["public"])
    assert hits[0]["source_version"] == "v2" and "one step" in hits[0]["text"]


def test_changed_text_under_the_same_version_leaves_no_stale_chunks(stack, collection, tmp_path):
    doc = {"id": "faq", "title": "FAQ", "text": long_text("refunds", 120), "source_version": "1"}
    ingest_path(stack.settings, write_jsonl(tmp_path / "a.jsonl", [doc]), collection=collection)
    shorter = {**doc, "text": "Refunds take five days."}
    ingest_path(stack.settings, write_jsonl(tmp_path / "b.jsonl", [shorter]),
                collection=collection)
    assert stack.call(COUNT, collection, "faq") == 1


def test_bad_lines_are_skipped_and_the_rest_ingested(stack, collection, tmp_path):
    path = tmp_path / "mixed.jsonl"
    good = [{"id": f"d{i}", "title": f"Doc {i}", "text": f"Body of document {i}."}
            for i in range(4)]
    lines = [json.dumps(good[0]), json.dumps(good[1]), '{"id": "broken", "text": ',
             json.dumps(good[2]), json.dumps({"id": "notext"}), json.dumps(good[3])]
    path.write_text("\n".join(lines) + "\n")
    report = ingest_path(stack.settings, path, collection=collection)
    assert report.counts["new"] == 4
    assert [(b.line, b.source) for b in report.bad_lines] == [(3, str(path)), (5, str(path))]
    assert stack.call(COUNT, collection) == 4


def test_search_honours_the_acl(stack, collection, tmp_path):
    docs = [
        {"id": "pub", "title": "Pricing", "text": "The price of the plan is ten euros.",
         "acl": ["public"]},
        {"id": "staff", "title": "Pricing internals", "text": "The price of the plan costs us "
         "four euros to serve.", "acl": ["staff"]},
    ]
    ingest_path(stack.settings, write_jsonl(tmp_path / "acl.jsonl", docs), collection=collection)
    public = stack.call(SEARCH, collection, "price of the plan", 5, ["public"])
    staff = stack.call(SEARCH, collection, "price of the plan", 5, ["staff", "public"])
    assert {h["doc_id"] for h in public} == {"pub"}
    assert {h["doc_id"] for h in staff} == {"pub", "staff"}


def test_searching_a_collection_never_ingested_is_a_clear_error(stack):
    with pytest.raises(Exception, match="no_such_collection"):
        stack.call(SEARCH, "no_such_collection", "x", 3, ["public"])


def test_ingest_writes_terms_and_search_ranks_by_the_mode_asked(stack, collection, tmp_path):
    docs = [
        {"id": "hinge", "title": "Spare parts", "text": "Order the ZX-4410 hinge for old doors.",
         "acl": ["public"]},
        {"id": "refund", "title": "Refunds", "text": "Refunds are paid within fourteen days.",
         "acl": ["public"]},
        {"id": "ship", "title": "Shipping", "text": "Parcels ship within three working days.",
         "acl": ["public"]},
    ]
    ingest_path(stack.settings, write_jsonl(tmp_path / "m.jsonl", docs), collection=collection)
    sparse = stack.call(SEARCH, collection, "zx-4410", 3, ["public"], "sparse")
    assert [h["doc_id"] for h in sparse] == ["hinge"]  # only it holds the term
    hybrid = stack.call(SEARCH, collection, "zx-4410", 3, ["public"], "hybrid", "dbsf")
    assert hybrid[0]["doc_id"] == "hinge" and len(hybrid) == 3
    with pytest.raises(Exception, match="unknown search mode 'bm25'; valid: dense, sparse"):
        stack.call(SEARCH, collection, "zx-4410", 3, ["public"], "bm25")
