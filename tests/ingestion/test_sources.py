import json

import pytest

from ragq.ingestion.sources import BadLine, read_documents
from ragq.schemas.document import Document


def write_lines(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def test_bad_lines_are_reported_with_line_numbers_and_the_rest_kept(tmp_path):
    path = write_lines(tmp_path / "c.jsonl", [
        json.dumps({"id": "a", "title": "A", "text": "alpha"}),
        "{not json",
        json.dumps({"id": "b", "title": "B"}),
        "",
        json.dumps(["a", "list"]),
        json.dumps({"id": "a", "title": "again", "text": "dup"}),
        json.dumps({"id": "c", "title": "C", "text": "gamma", "acl": ["staff"]}),
    ])
    items = list(read_documents(path))
    docs = [i for i in items if isinstance(i, Document)]
    bad = {i.line: i.reason for i in items if isinstance(i, BadLine)}
    assert [d.id for d in docs] == ["a", "c"]
    assert set(bad) == {2, 3, 5, 6}
    assert "invalid JSON" in bad[2]
    assert "text" in bad[3]
    assert "JSON object" in bad[5]
    assert "duplicate id 'a' (first at line 1)" in bad[6]
    assert str(next(i for i in items if isinstance(i, BadLine))).startswith(f"{path}:2: ")


def test_folder_of_markdown_and_text(tmp_path):
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "setup.md").write_text("intro\n# Setting up\nRun the installer.")
    (tmp_path / "notes_on_billing.txt").write_text("Invoices are monthly.")
    (tmp_path / "empty.md").write_text("  \n")
    (tmp_path / "image.png").write_bytes(b"\x89PNG")
    items = list(read_documents(tmp_path))
    docs = {i.id: i for i in items if isinstance(i, Document)}
    assert set(docs) == {"guide/setup.md", "notes_on_billing.txt"}
    assert docs["guide/setup.md"].title == "Setting up"
    assert docs["notes_on_billing.txt"].title == "notes on billing"
    assert [b.source for b in items if isinstance(b, BadLine)] == [str(tmp_path / "empty.md")]


def test_dataset_folder_reads_its_corpus(tmp_path):
    write_lines(tmp_path / "corpus.jsonl", [json.dumps({"id": "x", "text": "t"})])
    write_lines(tmp_path / "questions.jsonl", [json.dumps({"custom_id": "q", "question": "?"})])
    assert [d.id for d in read_documents(tmp_path)] == ["x"]


def test_unsupported_or_missing_paths_are_rejected(tmp_path):
    with pytest.raises(FileNotFoundError):
        read_documents(tmp_path / "nope.jsonl")
    (tmp_path / "x.csv").write_text("a,b")
    with pytest.raises(ValueError, match="unsupported file type"):
        read_documents(tmp_path / "x.csv")
