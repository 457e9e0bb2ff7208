"""Compound questions that are not nested: comparisons of two entities, several questions
joined by "and", and statements whose last entity carries the question ("X is an album by a
singer from what state?"). Used by the router and the planner."""

from __future__ import annotations

import itertools
import re

from ragq.orchestration.text import content_words
from ragq.providers.offline.lexicon import entity_spans
from ragq.providers.offline.structure import _DET, _PREPS, anchored

_PAIR_GAP = re.compile(r",?\s+(?:and|&|or|versus|vs\.?|compared\s+(?:to|with))\s+(?:the\s+)?",
                       re.I)
_BETWEEN = re.compile(r"\bbetween\s+(.+?)\s+and\s+(.+?)(?=\s+(?:in|on|for|when|with|"
                      r"regarding|as)\b|[?,;]|$)", re.I)
COMPARATIVE = re.compile(
    r"\b(?:both|either|neither|same|shared?|versus|vs\.?|compared?\s+(?:to|with)|differ\w*|"
    r"(?:which|who|whose)\b[^?]*\b(?:\w+er|\w+est|first|last|more|most|less|fewer|earlier)\b"
    r"[^?]*\bor\b)", re.I)
_SPLIT_AND = re.compile(
    r"(?:,\s*|\s+)and\s+(?=(?:what|how|why|which|when|where|who|whom|whose|is|are|was|were|do|"
    r"does|did|can|could|should|would|will|has|have)\b)|;\s+|\?\s+(?=\S)", re.I)
_PARTICIPLE = r"(?:\w+ed|based|born|made|held|known|run|owned|built|founded|written|sung|shot)"
_NOT_HEAD = rf"(?!(?:{_PREPS[3:-1]}|that|which|who|whom|whose|where|when|{_PARTICIPLE})\b)"
_FHEAD = rf"(?:{_NOT_HEAD}[\w'’-]+\s+){{0,3}}{_NOT_HEAD}[\w'’-]+"
_FOCUS = re.compile(
    rf"\b(?P<head>{_DET}\s+{_FHEAD})\s+(?:(?P<rel>that|which|who|whom|whose|where)\s+"
    rf"|(?={_PARTICIPLE}\s+(?:by|in|on|at|for|"
    r"from|as)\s+(?:what|which|who|whom)\b)|(?=(?:from|in|of|at|on|for|with)\s+(?:what|which)\b))",
    re.I)
_FOCUS_WORDS = re.compile(r"\b(?:what|which|whom|who|how|where|when)\b", re.I)


def focus_split(question: str) -> tuple[str, str] | None:
    """Split a statement whose question hides in a description of its last entity
    ("X is an album by a singer from what state?") into the statement up to that entity and
    the question about it: ("X is an album by a singer", "{0} from what state?")."""
    text = question.strip()
    if _FOCUS_WORDS.match(text):
        return None  # an ordinary wh-question: nothing hidden
    for match in _FOCUS.finditer(text):
        rest = text[match.end() :]
        if not _FOCUS_WORDS.search(rest) or not anchored(text[: match.start()]):
            continue
        first = text[: match.end("head")].strip(" ,")
        joiner = "{0}'s " if (match.group("rel") or "").lower() == "whose" else "{0} "
        if len(first.split()) >= 4:
            return first, joiner + rest.strip()
    return None


def comparison_pair(question: str) -> tuple[str, str] | None:
    """The two things a comparison question sets side by side, if it is one."""
    if not COMPARATIVE.search(question):
        return None
    spans = entity_spans(question)
    for left, right in itertools.pairwise(spans):
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
