"""Read documents from what a user points `ragq ingest` at: a JSONL file, or a folder (or single
file) of Markdown/text. Bad input is reported per line and skipped; the rest goes through."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from ragq.schemas.document import Document

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


def _parse_line(raw: str) -> Document:
    data = json.loads(raw)
    if not isinstance(data, dict):
        raise ValueError(f"expected a JSON object, got {type(data).__name__}")
    return Document.model_validate(data)


def read_jsonl(path: Path) -> Iterator[Document | BadLine]:
    """Documents of a JSONL file, in order; a repeated id is reported, the first one kept."""
    seen: dict[str, int] = {}
    with path.open(encoding="utf-8", errors="replace") as fh:
        for number, raw in enumerate(fh, start=1):
            if not raw.strip():
                continue
            try:
                doc = _parse_line(raw)
            except json.JSONDecodeError as exc:
                yield BadLine(str(path), number, f"invalid JSON: {exc.msg} at column {exc.colno}")
                continue
            except ValidationError as exc:
                yield BadLine(str(path), number, describe_validation_error(exc))
                continue
            except ValueError as exc:
                yield BadLine(str(path), number, str(exc))
                continue
            if doc.id in seen:
                first = seen[doc.id]
                yield BadLine(str(path), number, f"duplicate id {doc.id!r} (first at line {first})")
                continue
            seen[doc.id] = number
            yield doc


def _text_document(path: Path, root: Path) -> Document | BadLine:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return BadLine(str(path), None, f"unreadable: {exc}")
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
