"""Conflicting evidence (SPEC C11): two sentences from different chunks that say the same thing
about the same subject with a different number, date or duration ("refunds within 14 days" vs
"refunds within 30 days"). Reported, never averaged."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from ragq.orchestration.text import content_words, stem
from ragq.providers.offline.lexicon import sentences
from ragq.schemas.flow import Contradiction, Evidence

_QUANTITY = re.compile(
    r"\b(\d+(?:[.,]\d+)?)\s*(%|percent|seconds?|minutes?|hours?|days?|weeks?|months?|years?|"
    r"tokens?|requests?|mb|gb|kb|dollars?|usd|times)?\b", re.I)
SAME_CLAIM = 0.6  # Jaccard of the sentences' content words, numbers taken out
MIN_SHARED = 2  # content words both must share besides the quantity


@dataclass(frozen=True)
class _Claim:
    sentence: str
    doc_id: str
    chunk_id: str
    frame: frozenset[str]
    values: tuple[tuple[str, str], ...]  # (number, unit)


def _unit(raw: str | None) -> str:
    return stem((raw or "").lower().rstrip("s")) if raw else ""


def _claims(context: Sequence[Evidence]) -> list[_Claim]:
    out = []
    for item in context:
        for sentence in sentences(item.text):
            values = tuple((m.group(1), _unit(m.group(2))) for m in _QUANTITY.finditer(sentence))
            if not values:
                continue
            frame = frozenset(stem(w) for w in content_words(_QUANTITY.sub(" ", sentence)))
            out.append(_Claim(sentence, item.doc_id, item.chunk_id, frame, values))
    return out


def _conflict(a: _Claim, b: _Claim) -> bool:
    shared = a.frame & b.frame
    if len(shared) < MIN_SHARED or len(shared) / len(a.frame | b.frame) < SAME_CLAIM:
        return False
    units_a = {u: n for n, u in a.values}
    units_b = {u: n for n, u in b.values}
    common = set(units_a) & set(units_b)
    return bool(common) and any(units_a[u] != units_b[u] for u in common) and (
        set(a.values) != set(b.values))


def detect(context: Sequence[Evidence]) -> list[Contradiction]:
    """Pairs of claims from different chunks that share their wording but not their numbers."""
    claims = _claims(context)
    found: list[Contradiction] = []
    for i, a in enumerate(claims):
        for b in claims[i + 1 :]:
            if a.chunk_id == b.chunk_id or not _conflict(a, b):
                continue
            topic = " ".join(sorted(a.frame & b.frame))
            found.append(Contradiction(
                topic=topic, statements=[a.sentence, b.sentence], doc_ids=[a.doc_id, b.doc_id],
                chunk_ids=[a.chunk_id, b.chunk_id],
                reason=f"same claim, different values: {a.values} vs {b.values}"))
    return found
