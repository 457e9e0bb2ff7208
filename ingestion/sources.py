"""Read documents from what a user points `ragq ingest` at: a JSONL file, or a folder (or single
file) of Markdown/text. Bad input is reported per line and skipped; the rest goes through."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ragq.ingestion.jsonl import decode_line, load_json_line
from ragq.schemas.document import Document
from ragq.schemas.text import input_problem

TEXT_SUFFIXES = (".md", ".markdown", ".txt")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$", re.MULTILINE)


@dataclass(frozen=True)
class BadLine:
    """One input that could not become a document; ``line`` is None for whole files."""

    source: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        where = f"{self.source}:{self.line}" if self.line is not None else self.source
        return f"{where}: {self.reason}"


def describe_validation_error(exc: ValidationError) -> str:
    """One line naming each bad field and why, e.g. ``text: Field required``."""
    parts = []
    for err in exc.errors():
        field = ".".join(str(p) for p in err["loc"]) or "(document)"
        parts.append(f"{field}: {err['msg']}")
    return "; ".join(parts)


def _parse_line(text: str) -> Document:
    data = load_json_line(text)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return Document.model_validate(data)


def _document_or_bad(path: Path, number: int, raw: bytes) -> Document | BadLine | None:
    """The document of one line, why it is bad, or None for a blank line."""
    try:
        text = decode_line(raw, number)
        if not text.strip():
            return None
        return _parse_line(text)
    except ValidationError as exc:
        return BadLine(str(path), number, describe_validation_error(exc))
    except ValueError as exc:
        return BadLine(str(path), number, str(exc))


def read_jsonl(path: Path) -> Iterator[Document | BadLine]:
    """Documents of a JSONL file (UTF-8, a byte-order mark allowed), in order; a line that is
    not a document (invalid UTF-8 or JSON, a bad field) is reported with its number and the
    rest go through; a repeated id is reported, the first one kept."""
    seen: dict[str, int] = {}
    with path.open("rb") as fh:  # bytes: each line is decoded alone, see decode_line
        for number, raw in enumerate(fh, start=1):
            doc = _document_or_bad(path, number, raw)
            if not isinstance(doc, Document):
                if doc is not None:
                    yield doc
                continue
            if doc.id in seen:
                first = seen[doc.id]
                yield BadLine(str(path), number, f"duplicate id {doc.id!r} (first at line {first})")
                continue
            seen[doc.id] = number
            yield doc


def _text_document(path: Path, root: Path) -> Document | BadLine:
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        return BadLine(str(path), None, f"unreadable: {exc}")
    if input_problem(text):
        return BadLine(str(path), None, "unreadable: holds text that is not valid Unicode")
    if not text.strip():
        return BadLine(str(path), None, "empty file")
    heading = _HEADING.search(text)
    title = heading.group(1) if heading else path.stem.replace("_", " ").replace("-", " ")
    doc_id = path.relative_to(root).as_posix() if path != root else path.name
    return Document(id=doc_id, title=title, text=text)


def read_text_tree(root: Path) -> Iterator[Document | BadLine]:
    """One document per .md/.txt file under ``root`` (or ``root`` itself), id = relative path."""
    files = [root] if root.is_file() else sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in TEXT_SUFFIXES
    )
    base = root.parent if root.is_file() else root
    for path in files:
        yield _text_document(path, base)


def read_documents(path: Path) -> Iterator[Document | BadLine]:
    """Documents from a JSONL file, a text/Markdown file, or a folder of them (a folder holding
    a ``corpus.jsonl`` is a dataset folder: its corpus is read).

    Raises FileNotFoundError for a missing path and ValueError for an unsupported file type.
    """
    if not path.exists():
        raise FileNotFoundError(f"{path}: no such file or folder")
    if path.is_dir():
        corpus = path / "corpus.jsonl"  # a dataset folder (corpus.jsonl + questions.jsonl)
        return read_jsonl(corpus) if corpus.is_file() else read_text_tree(path)
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        return read_jsonl(path)
    if path.suffix.lower() in TEXT_SUFFIXES:
        return read_text_tree(path)
    raise ValueError(
        f"{path}: unsupported file type {path.suffix!r}; give a .jsonl file, a .md/.txt file "
        "or a folder of them"
    )
