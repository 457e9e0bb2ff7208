"""The shapes of compound questions: comparisons of two entities, several questions joined by
"and", and nested descriptions ("the country where the composer of X was born") whose inner
description must be resolved before the outer one can be searched. Used by the router (is the
question compound?) and the planner (how to cut it)."""

from __future__ import annotations

import re

from orchestration.text import content_words
from providers.offline.lexicon import WH_WORDS, entity_spans

_DET = r"(?:the|a|an)"
# Head-noun words of a described entity: no prepositions or verbs, at most four words.
_HEAD = r"(?:(?!(?:of|in|on|at|by|for|from|to|with|and|or|is|was|are|were)\b)[\w'’-]+\s+){0,3}" \
        r"(?!(?:of|in|on|at|by|for|from|to|with|and|or)\b)[\w'’-]+"
_RELATIVE = re.compile(
    rf"\b{_DET}\s+{_HEAD}\s*,?\s+(?:(?:in|of|at|by|on|from|for|with)\s+which|that|which|who|whom"
    rf"|whose|where|when)\b", re.I)
_OF = re.compile(rf"\b{_DET}\s+{_HEAD}\s+of\s+", re.I)
_POSSESSIVE_HEAD = re.compile(
    r"^(?:['’]s?)\s+((?:(?!(?:\w+ed|\w+ing)\b)[a-z][\w-]*\s+)?(?!(?:\w+ed|\w+ing)\b)[a-z][\w-]*)")
_CLAUSE_END = re.compile(r"\?|;|,\s+(?:and|but)\b|\s+and\s+(?:is|are|was|were|has|had)\b")
# Head nouns that describe nothing by themselves: "the name of X" is X, not a hop.
_VACUOUS = frozenset({"name", "names", "number", "kind", "type", "part", "one", "title", "term",
                      "some", "many", "most", "all", "each", "any", "rest", "list", "amount",
                      "north", "south", "east", "west", "side", "edge", "center", "centre",
                      "middle", "top", "bottom", "end", "beginning", "start"})
_TRIVIAL = WH_WORDS | _VACUOUS | {"is", "was", "are", "were", "be", "called", "known", "named"}
_PLACEHOLDER = re.compile(r"\{\d+\}")
_PAIR_GAP = re.compile(r",?\s+(?:and|&|or|versus|vs\.?|compared\s+(?:to|with))\s+(?:the\s+)?",
                       re.I)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?=\s+(?:in|on|for|when|with|"
                      r"regarding|as)\b|[?,;]|$)", re.I)
COMPARATIVE = re.compile(
    r"\b(?:both|either|neither|same|versus|vs\.?|compared?\s+(?:to|with)|differ\w*|"
    r"(?:which|who|whose)\b[^?]*\b(?:\w+er|\w+est|first|last|more|most|less|fewer|earlier)\b"
    r"[^?]*\bor\b)", re.I)
_SPLIT_AND = re.compile(
    r"(?:,\s*|\s+)and\s+(?=(?:what|how|why|which|when|where|who|whom|whose|is|are|was|were|do|"
    r"does|did|can|could|should|would|will|has|have)\b)|;\s+|\?\s+(?=\S)", re.I)


def _anchored(text: str) -> bool:
    """Whether a description names something to look up: an entity, a placeholder or a number."""
    return bool(entity_spans(text)) or bool(re.search(r"\d", text))


def _meaningful_outer(outer: str) -> bool:
    """Whether the question around a cut-out description still asks something of its own."""
    rest = _PLACEHOLDER.sub(" ", outer)
    return any(w not in _TRIVIAL for w in content_words(rest))


def _relative_span(text: str, match: re.Match[str]) -> tuple[int, int]:
    end = _CLAUSE_END.search(text, match.end())
    return match.start(), (end.start() if end else len(text))


def _of_span(text: str, match: re.Match[str]) -> tuple[int, int] | None:
    head = match.group().split()
    if head[-2].lower() in _VACUOUS:
        return None
    after = [s for s in entity_spans(text) if s.start == match.end()]
    return (match.start(), after[0].end) if after else None


def _possessive_spans(text: str) -> list[tuple[int, int]]:
    out = []
    for span in entity_spans(text):
        head = _POSSESSIVE_HEAD.match(text[span.end - 2 if text[span.end - 2:span.end] in (
            "'s", "’s") else span.end:])
        if head and not text[span.end:].startswith(("s ",)):
            start = span.end - 2 if text[span.end - 2 : span.end] in ("'s", "’s") else span.end
            out.append((span.start, start + head.end()))
    return out


def bridge_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of embedded descriptions in ``text`` worth resolving first: each names
    an anchor (entity/number/placeholder), holds no question word of its own and leaves the
    rest of the text asking something. Sorted by start."""
    found: list[tuple[int, int]] = []
    for pos in range(len(text)):
        for pattern in (_RELATIVE, _OF):
            match = pattern.match(text, pos)
            if match and (pos == 0 or not text[pos - 1].isalnum()):
                span = _relative_span(text, match) if pattern is _RELATIVE else _of_span(
                    text, match)
                if span:
                    found.append(span)
    found.extend(_possessive_spans(text))
    return sorted({s for s in found if _usable(text, s)})


def _usable(text: str, span: tuple[int, int]) -> bool:
    start, end = span
    inner = text[start:end]
    rel_words = {"who", "whom", "whose", "where", "when", "which"}
    own_wh = [w for w in content_words(inner) if w in WH_WORDS]
    inner_words = [w.lower() for w in re.findall(r"\w+", inner)]
    wh_count = sum(w in WH_WORDS for w in inner_words)
    if own_wh and wh_count > sum(w in rel_words for w in inner_words[:8]):
        return False
    outer = text[:start] + " {9} " + text[end:]
    return (end - start) < len(text.strip()) and _anchored(inner) and _meaningful_outer(outer)


def decompose_chain(text: str, hops: list[str], *, max_hops: int) -> str:
    """Cut nested descriptions out of ``text``, innermost first, appending each to ``hops``
    (with ``{i}`` naming earlier hops) while fewer than ``max_hops`` are cut; returns what
    remains of ``text`` with placeholders."""
    spans = bridge_spans(text) if len(hops) < max_hops else []
    if not spans:
        return text
    start, end = spans[-1]  # the rightmost starts innermost: English nests to the right
    inner = text[start:end].strip(" ,")
    resolved = decompose_chain(inner, hops, max_hops=max_hops - 1)
    hops.append(resolved)
    outer = f"{text[:start]}{{{len(hops) - 1}}}{text[end:]}"
    return decompose_chain(outer, hops, max_hops=max_hops)


def comparison_pair(question: str) -> tuple[str, str] | None:
    """The two things a comparison question sets side by side, if it is one."""
    if not COMPARATIVE.search(question):
        return None
    spans = entity_spans(question)
    for left, right in zip(spans, spans[1:], strict=False):
        if _PAIR_GAP.fullmatch(question[left.end : right.start]):
            return left.text, right.text
    match = _BETWEEN.search(question)
    if match and all(content_words(g) for g in match.groups()):
        return match.group(1).strip(), match.group(2).strip()
    return None


def conjunction_parts(question: str) -> list[str]:
    """Independent questions joined into one ("What X, and how Y?"); one part when none."""
    parts = [p.strip(" ,;?") for p in _SPLIT_AND.split(question)]
    parts = [p for p in parts if len(p.split()) >= 3]
    return parts if len(parts) > 1 else [question.strip()]
