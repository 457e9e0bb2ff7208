"""One subject per contradiction, the rule every provider applies to what it reports.

Two statements contradict each other only when they say something about the same subject (the
same product, plan, policy or entity) and give it different values. A catalogue is not a
conflict: "Annual fee: $0.00" about one card and "Annual fee: $50.00" about another are two
facts, and so are two people's birth years. Each side of a :class:`Contradiction` names its
subject in ``subjects`` (the offline detector reads it from the chunk's title, headings and the
sentence; a model is asked for it), and a pair whose subjects differ is dropped here, the same
way for every provider.

A subject is compared by its words (lowercased, stemmed, stopwords out), so "the EcoCard" and
"EcoCard" meet while "Gold Rewards Card" and "Business Gold Rewards Card" stay two products. An
empty subject means the statement names no particular thing (a company-wide policy, say): it
meets only another empty subject, since a rule about one named product next to a general rule
is an exception, not a disagreement.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ragq.orchestration.text import STOPWORDS, stem, words
from ragq.schemas.flow import Contradiction


def subject_key(subject: str) -> frozenset[str]:
    """The words a subject is compared by: lowercased, stemmed, without stopwords."""
    return frozenset(stem(w) for w in words(subject) if w not in STOPWORDS)


def same_subject(a: str, b: str) -> bool:
    """Whether two subjects name the same thing (both naming nothing counts as the same)."""
    return subject_key(a) == subject_key(b)


def one_subject(conflict: Contradiction) -> bool:
    """Whether every side of ``conflict`` is about the same subject. A conflict that does not
    say its sides' subjects (one subject per statement) is taken as reported."""
    subjects: Sequence[str] = conflict.subjects
    if len(subjects) != len(conflict.statements):
        return True
    return all(same_subject(subjects[0], other) for other in subjects[1:])


def about_one_subject(conflicts: Iterable[Contradiction]) -> list[Contradiction]:
    """The conflicts whose sides share their subject, in order; the others are dropped."""
    return [c for c in conflicts if one_subject(c)]
