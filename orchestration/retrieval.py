"""How wide a search goes (SPEC C6)."""

from __future__ import annotations


def search_width(query: str, question: str, *, top_k: int, context_chunks: int) -> int:
    """``top_k`` for a sub-query, widened to the context size when the query is the question
    itself.

    A search for the whole question is the one that alone may have to fill the context (on the
    simple route it is the only search), so it fetches as many chunks as the context holds; a
    part of the question only needs its own best few.
    """
    if query.strip().casefold() == question.strip().casefold():
        return max(top_k, context_chunks)
    return top_k
