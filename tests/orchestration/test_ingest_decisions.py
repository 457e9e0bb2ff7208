from ragq.orchestration.ingest import DocumentAction, StoredDocument, content_hash, decide
from ragq.schemas.document import Document

DOC = Document(id="d", title="T", text="some text", source_version="v1")


def stored(**overrides):
    base = {"source_version": "v1", "content_hash": content_hash(DOC), "chunk_count": 1,
            "points_in_store": 1}
    return StoredDocument(**{**base, **overrides})


def test_unknown_document_is_new():
    assert decide(DOC, None) is DocumentAction.NEW


def test_identical_document_is_skipped():
    assert decide(DOC, stored()) is DocumentAction.SKIP


def test_new_source_version_replaces():
    assert decide(DOC, stored(source_version="v0")) is DocumentAction.REPLACE


def test_changed_text_or_acl_under_the_same_version_replaces():
    assert decide(DOC, stored(content_hash="other")) is DocumentAction.REPLACE
    restricted = DOC.model_copy(update={"acl": ("staff",)})
    assert decide(restricted, stored()) is DocumentAction.REPLACE


def test_missing_points_are_repaired():
    assert decide(DOC, stored(points_in_store=0)) is DocumentAction.REPAIR
