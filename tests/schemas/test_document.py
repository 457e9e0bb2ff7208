import pytest
from pydantic import ValidationError

from ragq.schemas.document import Document


def test_defaults_follow_the_spec():
    doc = Document(id="a", title="t", text="x")
    assert doc.acl == ("public",)
    assert doc.source_version.startswith("sha256:")


def test_derived_version_changes_with_the_content():
    a = Document(id="a", title="t", text="x")
    b = Document(id="a", title="t", text="y")
    assert a.source_version != b.source_version
    assert a.source_version == Document(id="a", title="t", text="x").source_version


@pytest.mark.parametrize(
    "fields, field_name",
    [
        ({"id": "", "text": "x"}, "id"),
        ({"id": "  ", "text": "x"}, "id"),
        ({"id": "a", "text": "   "}, "text"),
        ({"id": "a", "text": "x", "acl": []}, "acl"),
        ({"id": "a", "text": "x", "authority_tier": 0}, "authority_tier"),
        ({"id": "a", "text": "x", "colour": "red"}, "colour"),
    ],
)
def test_bad_documents_name_the_field(fields, field_name):
    with pytest.raises(ValidationError) as info:
        Document.model_validate(fields)
    assert field_name in str(info.value)
