"""Heuristic complexity classes from the form of the question.

Each rule is a named cue with the class it votes for; the first class (in precedence order)
with a matching cue wins, and the reason lists the cues that fired, so routing can be audited.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ragq.providers.offline.lexicon import entities
from ragq.providers.offline.shapes import (
    COMPARATIVE,
    comparison_pair,
    conjunction_parts,
    focus_split,
)
from ragq.providers.offline.structure import bridge_spans, normalize_heads
from ragq.schemas.flow import QuestionClass, RouteDecision

Cue = Callable[[str], bool]

_INVESTIGATIVE = re.compile(
    r"^\s*why\b|\binvestigat|\broot cause|\bwhat (?:caused|went wrong)|\ball (?:the )?"
    r"(?:cases|instances|occurrences|incidents|tickets)\b|\bevery (?:case|instance|time)\b"
    r"|\bexplain why\b|\bfind out why\b", re.I)
_PROCEDURAL = re.compile(
    r"^\s*(?:how\s+(?:do|can|should|would|could|might|to)\b(?!.*\b(?:differ|compare|relate|"
    r"relationship|impact|affect)\w*\b)|what\s+(?:are\s+)?(?:the\s+)?steps\b|steps\s+to\b"
    r"|walk\s+me\s+through\b)|\bhow-to\b|\bstep[- ]by[- ]step\b|\bset(?:ting)?\s+up\b"
    r"|\bconfigure\b|\binstall\b", re.I)
_SHORT_WORDS = 14  # a wh-question this short with one entity is a lookup

CUES: dict[QuestionClass, dict[str, Cue]] = {
    QuestionClass.INVESTIGATIVE: {
        "open why/investigate/all-cases form": lambda q: bool(_INVESTIGATIVE.search(q)),
    },
    QuestionClass.MULTI_HOP: {
        "comparison of several entities": lambda q: comparison_pair(q) is not None
        or (bool(COMPARATIVE.search(q)) and len(entities(q)) >= 2),
        "nested description of an entity (relative clause, 'the X of Y', possessive chain)":
            lambda q: bool(bridge_spans(normalize_heads(q))),
        "a statement whose last entity carries the question": lambda q: focus_split(q)
        is not None,
        "several questions in one": lambda q: len(conjunction_parts(q)) > 1,
        "several named entities": lambda q: len(entities(q)) >= 3
        or (len(entities(q)) >= 2 and len(q.split()) > _SHORT_WORDS),
    },
    QuestionClass.PROCEDURAL: {
        "how-to / steps form": lambda q: bool(_PROCEDURAL.search(q)),
    },
}


def route(question: str) -> RouteDecision:
    """The class of ``question`` and the cues behind it; ``simple_fact`` when no cue fires."""
    for question_class, cues in CUES.items():
        fired = [name for name, cue in cues.items() if cue(question)]
        if fired:
            confidence = min(0.9, 0.55 + 0.15 * len(fired))
            return RouteDecision(question_class=question_class, reason="; ".join(fired),
                                 confidence=confidence)
    count = len(entities(question))
    return RouteDecision(
        question_class=QuestionClass.SIMPLE_FACT,
        reason=f"a direct question about {count} named entit{'y' if count == 1 else 'ies'} "
               "with no multi-part cue",
        confidence=0.6 if len(question.split()) <= _SHORT_WORDS else 0.5,
    )
