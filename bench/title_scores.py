"""What "title search finds the document" means, in one place for every title bench.

Titles repeat in real corpora (several paragraphs of one article), so three figures:
strict top-1 (the very document ranks first), title top-1 (a document with that title ranks
first), and within-k (the document ranks no lower than the number of documents sharing its
title, ``k``; a document with a unique title must rank first).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any


def title_top_k(docs: Sequence[Mapping[str, Any]]) -> int:
    """How many hits a title search needs: the size of the largest group sharing a title."""
    return max(Counter(d["title"] for d in docs).values())


def score_title_search(
    docs: Sequence[Mapping[str, Any]], results: Sequence[Sequence[Mapping[str, Any]]]
) -> dict[str, float]:
    """The three rates over ``docs``; ``results[i]`` are the hits (dicts with ``doc_id`` and
    ``title``, best first, chunk-level) of a search for ``docs[i]["title"]``."""
    shared = Counter(d["title"] for d in docs)
    strict = by_title = within_k = 0
    for doc, hits in zip(docs, results, strict=True):
        ids = [h["doc_id"] for h in hits]
        strict += bool(ids) and ids[0] == doc["id"]
        by_title += bool(hits) and hits[0]["title"] == doc["title"]
        within_k += doc["id"] in ids[: shared[doc["title"]]]
    n = len(docs)
    return {"strict_top1": strict / n, "title_top1": by_title / n, "within_k": within_k / n}
