"""How a chunk's two similarities to a query become its one search score, for every adapter.

Every point holds two vectors of the same embedding space: ``text`` (the chunk, titled) and
``title`` (its document's title alone). A chunk whose text is about a sub-topic of its title
(a paragraph on the Rohingya under "Myanmar") sits far from a query that is only the title, and
loses to any chunk that merely mentions it; its title vector does not. A search scores both
vectors with the same query and keeps, per point, the better of the two, the title's lowered by
``title_margin`` so that it only wins when it is clearly the stronger signal.

Adapters fetch :meth:`TitleFusion.candidates` nearest points per vector, score the union of both
lists on both vectors (so every reported score is exact), and hand the two scored lists to
:meth:`TitleFusion.fuse`. The fused score is the larger of two terms, each growing with one raw
score, so a point in neither list has, on whichever term is its larger, ``candidates(top_k) >=
top_k`` listed points scoring at least as high: the fused top ``top_k`` of the union is the true
one (as far as the engine's nearest-neighbour search is exact).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from ragq.vectorstore.base import Hit

#: Names of the two dense vectors of every point, as stored by both adapters.
TEXT = "text"
TITLE = "title"
VECTOR_NAMES: tuple[str, ...] = (TEXT, TITLE)

#: Measured with bench/title_vector.py (MiniLM, three corpora, margins 0 to 0.2): any margin up to
#: 0.1 gives title search all its gain (musique within-k 94.2% -> 99.5%), but below 0.1 loose
#: title matches displace gold chunks for questions (margin 0 loses 2-3 points of all-gold rate);
#: at 0.1 no corpus loses question recall. An exact title query scores ~1.0 on its title, far
#: above any margin; a question scores a related title about as high as a good text match.
DEFAULT_TITLE_MARGIN = 0.1


@dataclass(frozen=True)
class ScoredPoint:
    """One point as an engine scored it on one of the vectors."""

    id: str
    score: float
    payload: Mapping[str, Any]


@dataclass(frozen=True)
class TitleFusion:
    """Fused score = ``max(text, title - title_margin)``, cosine similarities in [-1, 1].

    ``title_margin`` 0 lets an exact title query (title score ~1.0) beat any text; larger
    margins keep ordinary questions, which resemble titles only loosely, on text similarity.
    Raises ``ValueError`` for a margin outside [0, 2] (beyond 2 the title could never count).
    """

    title_margin: float = DEFAULT_TITLE_MARGIN

    def __post_init__(self) -> None:
        if not 0.0 <= self.title_margin <= 2.0:
            raise ValueError(f"title_margin must be in [0, 2], got {self.title_margin}")

    def candidates(self, top_k: int) -> int:
        """How many nearest points to fetch per vector for ``top_k`` fused hits: more than
        ``top_k`` so the union holds the points that are good on one vector only."""
        return 2 * top_k + 10

    def score(self, text: float | None, title: float | None) -> float:
        """The fused score of a point; a side the engine did not score (None) is left out.

        Raises ``ValueError`` when both are None.
        """
        sides = [x for x in (text, None if title is None else title - self.title_margin)
                 if x is not None]
        if not sides:
            raise ValueError("a point needs a text or a title score")
        return max(sides)

    def fuse(
        self, text: Iterable[ScoredPoint], title: Iterable[ScoredPoint], top_k: int
    ) -> list[Hit]:
        """The ``top_k`` points of both lists by fused score, best first, ties broken by text
        score then id so every adapter returns the same order for the same scores."""
        by_text = {p.id: p for p in text}
        by_title = {p.id: p for p in title}
        hits = []
        for point_id in by_text.keys() | by_title.keys():
            t, s = by_text.get(point_id), by_title.get(point_id)
            text_score = None if t is None else t.score
            title_score = None if s is None else s.score
            payload = t.payload if t is not None else by_title[point_id].payload
            fused = self.score(text_score, title_score)
            hits.append(Hit(point_id, fused, dict(payload), text_score, title_score))
        hits.sort(key=_rank_key)
        return hits[:top_k]


def _rank_key(hit: Hit) -> tuple[float, float, str]:
    text = hit.text_score if hit.text_score is not None else -2.0  # below any cosine
    return (-hit.score, -text, hit.id)
