"""Declare the metadata tau2_banking_dev's pages already imply, by rule (issue 37).

Two fields, computed from each page alone, never from a question:

- ``product_family``: the knowledge-base section the page is filed under. The source (tau2-bench's
  banking_knowledge) files pages as ``<family>/<product>/<n>``, and ragq's conversion keeps that
  path in the id (``doc_credit_cards_ecocard_001``). Titles name a family on too few pages
  ("Mobile Deposits and ATM Access on Cobalt Blue" names a product, not its family), so the
  family is read from the path: its segments up to the first that ends a family name (a plural
  kind: ``accounts``, ``cards``, ``subscriptions``; or ``pay``, ``later``, ``support``, which end
  the other names), singular, in words: ``business checking account``.
- ``doc_type``: what kind of page the title says it is: an internal procedure ("Internal: …",
  "(Internal) …"), a FAQ ("FAQ", or a title that is a question), troubleshooting, an overview
  or guide, else an article.

Usage:
    python bench/tau2_fields.py /work/shared/data/tau2_banking_dev OUT_DIR
writes OUT_DIR/corpus.jsonl (the pages with ``metadata``), OUT_DIR/questions.jsonl (a copy)
and OUT_DIR/metadata_schema.json (the two fields as enums, for ``ragq ingest
--metadata-schema``).
"""

from __future__ import annotations

import json
import re
import shutil
import sys
from collections import Counter
from pathlib import Path
from typing import Any

#: The last segment of a family name in the page path.
_FAMILY_END = re.compile(r"^(accounts|cards|pay|later|support|subscriptions)$")
_QUESTION_START = re.compile(r"^(how|what|why|when|where|who|which|can|do|does|is|are|will|"
                             r"should)\b", re.IGNORECASE)


def product_family(doc_id: str) -> str | None:
    """The family segment of the page's path, singular and in words; None when the id holds
    no such path."""
    segments = doc_id.removeprefix("doc_").split("_")
    for end, segment in enumerate(segments):
        if _FAMILY_END.match(segment):
            while end + 1 < len(segments) and _FAMILY_END.match(segments[end + 1]):
                end += 1  # "buy now pay later": a family name may end in two such words
            words = segments[:end + 1]
            words[-1] = re.sub(r"s$", "", words[-1]) if words[-1] in ("accounts", "cards") \
                else words[-1]
            return " ".join(words)
    return None


def doc_type(title: str) -> str:
    """The kind of page its title says it is."""
    t = title.strip()
    if re.match(r"^\(?internal\)?\b", t, re.IGNORECASE):
        return "internal procedure"
    if re.search(r"\bFAQs?\b", t) or t.endswith("?") or _QUESTION_START.match(t):
        return "faq"
    if re.search(r"\btroubleshoot", t, re.IGNORECASE):
        return "troubleshooting"
    if re.search(r"\b(overview|guide|getting started|introduction)\b", t, re.IGNORECASE):
        return "overview"
    return "article"


def page_fields(doc: dict[str, Any]) -> dict[str, str]:
    """The declared fields of one page."""
    fields = {"doc_type": doc_type(doc.get("title", ""))}
    family = product_family(doc["id"])
    if family:
        fields["product_family"] = family
    return fields


def schema(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """The two fields as enums, their values as the pages have them."""
    families = sorted({d["metadata"]["product_family"] for d in docs
                       if "product_family" in d["metadata"]})
    types = sorted({d["metadata"]["doc_type"] for d in docs})
    return {"fields": [
        {"name": "product_family", "type": "enum", "values": families,
         "description": "the kind of product a page is about (its knowledge-base section)"},
        {"name": "doc_type", "type": "enum", "values": types,
         "description": "what kind of page: internal procedure, faq, troubleshooting, overview,"
                        " article"}]}


def write(dataset: Path, out: Path) -> dict[str, Any]:
    """Write the annotated corpus, the questions and the schema under ``out``; returns the
    schema."""
    out.mkdir(parents=True, exist_ok=True)
    docs = [json.loads(line) for line in (dataset / "corpus.jsonl").read_text().splitlines()
            if line.strip()]
    for doc in docs:
        doc["metadata"] = {**doc.get("metadata", {}), **page_fields(doc)}
    (out / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    shutil.copyfile(dataset / "questions.jsonl", out / "questions.jsonl")
    declared = schema(docs)
    (out / "metadata_schema.json").write_text(json.dumps(declared, indent=2))
    return declared


def main() -> None:
    dataset, out = Path(sys.argv[1]), Path(sys.argv[2])
    declared = write(dataset, out)
    docs = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    for field in declared["fields"]:
        counts = Counter(d["metadata"].get(field["name"], "(none)") for d in docs)
        print(f"{field['name']}: " + ", ".join(f"{v} {n}" for v, n in counts.most_common()))


if __name__ == "__main__":
    main()
