"""Which source(s) a sub-query searches, when a job may search several (issue 16).

A *source* is a collection with a description registered at ingest. The offline choice scores
each source by the lexical fit of the sub-query to the source's name and description, plus a
small prior from how often the source's chunks reached an answer before; it picks the best
source, and every other one whose score is close to it (a sub-query that fits two sources
equally well searches both). When nothing fits at all, every source is searched: guessing one
would hide the answer as often as find it.

A model's choice (the ``source_router`` role) goes through :func:`accept_choice`, which keeps
only sources the job may search and falls back to the offline choice when none is left.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.orchestration.text import content_words, stem, words
from ragq.schemas.flow import SourceChoice, SourceProfile

# Sources scoring within this of the best are searched too (scores are 0..1 fits).
CLOSE_MARGIN = 0.1
# The prior from past hits is at most this much: it breaks ties, it never beats a fit.
PRIOR_WEIGHT = 0.05
NO_FIT = "no source's description fits the query: every source searched"


def _vocabulary(source: SourceProfile) -> set[str]:
    """The stemmed words a source is known by: its name's parts and its description."""
    return {stem(w) for w in words(f"{source.name.replace('-', ' ').replace('_', ' ')} "
                                   f"{source.description}")}


def lexical_fit(query: str, source: SourceProfile) -> float:
    """Share of the query's content words (stemmed) found in the source's name and
    description: 0.0 to 1.0 (0.0 for a query without content words)."""
    wanted = {stem(w) for w in content_words(query)}
    if not wanted:
        return 0.0
    return len(wanted & _vocabulary(source)) / len(wanted)


def prior(source: SourceProfile, sources: Sequence[SourceProfile]) -> float:
    """The source's share of all past hits, scaled to at most :data:`PRIOR_WEIGHT`."""
    total = sum(s.hits for s in sources)
    return PRIOR_WEIGHT * source.hits / total if total else 0.0


def score_sources(query: str, sources: Sequence[SourceProfile]) -> dict[str, float]:
    """{source name: fit + prior}, rounded to 4 places so the ledger shows what was compared."""
    return {s.name: round(lexical_fit(query, s) + prior(s, sources), 4) for s in sources}


def choose_sources(query: str, sources: Sequence[SourceProfile], *,
                   margin: float = CLOSE_MARGIN) -> SourceChoice:
    """The offline choice: the best-scoring source and those within ``margin`` of it, best
    first (every source when no description fits). Raises ValueError for no sources."""
    if not sources:
        raise ValueError("choose_sources needs at least one source")
    scores = score_sources(query, sources)
    fits = {s.name: lexical_fit(query, s) for s in sources}
    ranked = sorted(scores, key=lambda name: (-scores[name], name))
    if max(fits.values()) == 0.0:
        return SourceChoice(sources=ranked, scores=scores, reason=NO_FIT)
    best = scores[ranked[0]]
    chosen = [name for name in ranked if best - scores[name] <= margin]
    shown = ", ".join(f"{name} {scores[name]:.2f}" for name in ranked)
    why = "best fit" if len(chosen) == 1 else f"{len(chosen)} sources within {margin:.2f}"
    return SourceChoice(sources=chosen, scores=scores,
                        reason=f"{why} of the query to the source descriptions ({shown})")


def accept_choice(choice: SourceChoice, query: str, sources: Sequence[SourceProfile]
                  ) -> SourceChoice:
    """A model's choice, kept to the sources offered (each once, in its order); the offline
    choice, saying why, when the model named none of them."""
    offered = {s.name for s in sources}
    kept = list(dict.fromkeys(name for name in choice.sources if name in offered))
    if kept:
        dropped = [name for name in choice.sources if name not in offered]
        note = f"; ignored unknown {', '.join(dropped)}" if dropped else ""
        return SourceChoice(sources=kept, scores={k: v for k, v in choice.scores.items()
                                                  if k in offered},
                            reason=f"{choice.reason}{note}")
    fallback = choose_sources(query, sources)
    return fallback.model_copy(update={
        "reason": f"the model chose no offered source ({', '.join(choice.sources)}): "
                  f"{fallback.reason}"})
