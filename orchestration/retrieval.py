"""How wide a search goes (SPEC C6)."""

from __future__ import annotations

import math
from collections.abc import Sequence


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


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine similarity; 0 for a zero vector (some embedders do not return unit vectors)."""
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def weak_pass(scores: Sequence[float], *, min_top_score: float, min_margin: float
              ) -> str | None:
    """Why a search pass is weak, so rewriting it may pay off; None when it is strong.

    Weak: no hits, a top score below ``min_top_score``, or (when ``min_margin`` > 0) top hits
    too close to tell apart. A strong pass that a sufficiency check still calls insufficient is
    missing something a rewrite of the same need rarely finds; the verifier's follow-ups ask
    for what is missing instead.
    """
    if not scores:
        return "no hits"
    ranked = sorted(scores, reverse=True)
    if ranked[0] < min_top_score:
        return f"top score {ranked[0]:.3f} < {min_top_score:.3f}"
    if min_margin > 0 and len(ranked) > 1 and ranked[0] - ranked[1] < min_margin:
        return f"margin {ranked[0] - ranked[1]:.3f} < {min_margin:.3f}"
    return None
