"""A ticket's asks as needs: the same need stated twice is one ask, and a ticket
holds no more asks than the flow is sized to serve.

Whoever read the ticket (the offline reader or a model), its asks reach the flow through
:func:`merge_asks`. Two asks are the same need when most of their content words are shared
(stemmed), or, where the reader has an embedder, when their vectors nearly coincide ("Please
transfer me to a human agent" and "I need to speak with a real person"). Past the cap, the
closest remaining pair merges into one ask that states both, again and again: a ticket of
twenty related lines becomes a few asks that together still say everything, instead of losing
its last lines or multiplying the searches and the context.
"""

from __future__ import annotations

from collections.abc import Sequence

from ragq.orchestration.text import ASK_MAX_CHARS, bounded_ask, content_words, stem
from ragq.schemas.flow import Ask

#: Share of content words (stemmed, Jaccard) at which two asks are one need reworded.
SAME_NEED_WORDS = 0.5
#: Cosine of two asks' sentence vectors at which they are one need reworded: the usual
#: paraphrase cut for MiniLM-sized sentence embedders ("I need a human agent now" and "Can you
#: transfer me to a human agent please?" score 0.77; "Open a savings account" and "Which
#: savings account pays most", two needs about one thing, 0.66).
SAME_NEED_COSINE = 0.7
#: The most asks a ticket is served as, by default (``RAGQ_TICKET_MAX_ASKS``).
MAX_ASKS = 6

Vectors = Sequence[Sequence[float]]


def merge_asks(asks: Sequence[Ask], *, max_asks: int = MAX_ASKS,
               vectors: Vectors | None = None) -> list[Ask]:
    """``asks`` with every near-duplicate pair merged, then the closest pairs merged until at
    most ``max_asks`` remain. ``vectors`` (unit sentence vectors, one per ask, optional) add
    meaning to the word overlap. Asks keep the order of their first line."""
    if max_asks < 1:
        raise ValueError(f"max_asks must be at least 1, not {max_asks}")
    close = _closeness(asks, vectors)
    groups = [[i] for i in range(len(asks))]
    while len(groups) > 1:
        score, a, b = max((max(close[i][j] for i in ga for j in gb), x, y)
                          for x, ga in enumerate(groups) for y, gb in enumerate(groups) if x < y)
        if score < 1.0 and len(groups) <= max_asks:
            break
        groups[a] = sorted(groups[a] + groups[b])
        del groups[b]
    return [_joined([asks[i] for i in group]) for group in groups]


def _closeness(asks: Sequence[Ask], vectors: Vectors | None) -> list[list[float]]:
    """How close each pair of asks is, scaled so 1.0 is "the same need": word overlap and
    (when given) cosine, each against its own threshold, the higher of the two. Groups are as
    close as their closest members (single linkage): a reworded plea joins its group through
    whichever wording it shares most with."""
    n = len(asks)
    out = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            score = _overlap(asks[i].text, asks[j].text) / SAME_NEED_WORDS
            if vectors is not None:
                cosine = sum(x * y for x, y in zip(vectors[i], vectors[j], strict=True))
                score = max(score, cosine / SAME_NEED_COSINE)
            out[i][j] = out[j][i] = score
    return out


def _overlap(a: str, b: str) -> float:
    """Jaccard share of the stemmed content words of ``a`` and ``b``."""
    sa, sb = {stem(w) for w in content_words(a)}, {stem(w) for w in content_words(b)}
    return len(sa & sb) / len(sa | sb) if sa and sb else 0.0


def _joined(group: Sequence[Ask]) -> Ask:
    """One ask standing for ``group``: the one ask itself, or every distinct text in order."""
    if len(group) == 1:
        return group[0]
    texts = list(dict.fromkeys(a.text for a in group))
    text = bounded_ask(" ".join(texts), ASK_MAX_CHARS)
    return Ask(text=text, reason=f"{len(group)} asks of the same or related needs, merged")
