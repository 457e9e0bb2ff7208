"""A new query for the same need, from a different angle each attempt: the key terms
alone, then the missing terms emphasised, then names the evidence mentions. A query already
tried (normalised) is never returned again."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from ragq.orchestration.text import content_words, normalize_query, words
from ragq.providers.offline.lexicon import WH_WORDS, coverage, entities
from ragq.providers.offline.sufficiency import TOP_EVIDENCE, evidence_texts
from ragq.schemas.flow import Evidence, Rewrite

Angle = Callable[[str, Sequence[Evidence]], str]


def _key_words(query: str) -> list[str]:
    """Content words of ``query`` outside its entities (those are kept whole)."""
    named = {w for e in entities(query) for w in words(e)}
    return [w for w in content_words(query) if w not in WH_WORDS and w not in named]


def _terms_only(query: str, evidence: Sequence[Evidence]) -> str:
    return " ".join(dict.fromkeys([*entities(query), *_key_words(query)]))


def _missing_first(query: str, evidence: Sequence[Evidence]) -> str:
    _, missing = coverage(query, evidence_texts(evidence, TOP_EVIDENCE))
    if not missing:
        return ""
    return " ".join(dict.fromkeys([*missing, *entities(query), *_key_words(query)[:3]]))


def _evidence_names(query: str, evidence: Sequence[Evidence]) -> str:
    own = {w.lower() for w in query.split()}
    named = [e for text in evidence_texts(evidence, 2) for e in entities(text)
             if e.lower() not in own][:2]
    return " ".join([*named, *entities(query), *_key_words(query)[:4]]) if named else ""


ANGLES: dict[str, Angle] = {
    "key terms only": _terms_only,
    "missing terms emphasised": _missing_first,
    "names seen in the evidence": _evidence_names,
}


def rewrite(sub_query: str, evidence: Sequence[Evidence], *, attempt: int,
            previous: Sequence[str]) -> Rewrite:
    """The rewrite for ``attempt`` (1-based); starts with the angle of that attempt, moves on
    while an angle repeats a query of ``previous`` (or the sub-query itself)."""
    query = re.sub(r"\{\d+\}", " ", sub_query)
    tried = {normalize_query(q) for q in [*previous, sub_query]}
    names = list(ANGLES)
    start = max(attempt - 1, 0) % len(names)
    for name in names[start:] + names[:start]:
        text = " ".join(ANGLES[name](query, evidence).split())
        if text and normalize_query(text) not in tried:
            return Rewrite(text=text, reason=f"attempt {attempt}: {name}")
    extra = [w for e in evidence for w in content_words(e.title or e.text)][:20]
    base = _terms_only(query, evidence) or query
    for count in range(1, len(extra) + 2):
        text = " ".join([base, *extra[:count]]) if count <= len(extra) else f"{base} {attempt}"
        if normalize_query(text) not in tried:
            return Rewrite(text=text, reason=f"attempt {attempt}: widened with evidence words")
    suffix = len(tried)
    while normalize_query(f"{base} variant {suffix}") in tried:
        suffix += 1
    return Rewrite(text=f"{base} variant {suffix}", reason="all angles tried")
