"""Texts as sparse term vectors for BM25-style search (the ``terms`` vector of every chunk).

Tokenizing: the lowercased words of :func:`~orchestration.text.words` (NFKC-free, possessive
``'s`` dropped), stopwords and one-character words dropped, then the light suffix strip of
:func:`~orchestration.text.stem`, so ``directors`` meets ``director``. Plain regexes: every
machine and both vector store adapters get the same terms.

A term's id is the first 4 bytes of its BLAKE2b digest, big-endian: an unsigned 32-bit integer,
stable across processes and Python versions (``hash()`` is salted per process). Two terms sharing
an id (about one pair per 2^32 / vocabulary, rare for a corpus of 10^5 terms) count as one.

Weights: a document term weighs its BM25 term-frequency part, ``tf (k1 + 1) / (tf + k1 (1 - b +
b dl / avgdl))``, with ``dl`` the document's term count and ``avgdl`` a fixed :data:`AVG_TERMS`
(chunks are cut to a fixed word budget, so their lengths vary little). A query term weighs 1.
The inverse document frequency is left to the engine: the collection's sparse vector has
Qdrant's IDF modifier, so document frequencies stay current as chunks come and go, and the dot
product the engine computes is the BM25 score.
"""

from __future__ import annotations

import hashlib
from collections import Counter

from ragq.orchestration.text import STOPWORDS, stem, words
from ragq.schemas.search import SparseTerms

#: BM25 term-frequency saturation and length normalisation, the usual defaults.
K1 = 1.2
B = 0.75
#: Average content terms per chunk assumed by the length normalisation: a chunk of ~180 words
#: (the default ``chunk_words``) keeps roughly half of them once stopwords are dropped.
AVG_TERMS = 100.0


def terms(text: str) -> list[str]:
    """The index terms of ``text`` in order, repeats kept (lowercased, stopwords and
    one-character words dropped, lightly stemmed)."""
    return [stem(w) for w in words(text) if len(w) > 1 and w not in STOPWORDS]


def term_id(term: str) -> int:
    """The stable unsigned 32-bit id of ``term`` (BLAKE2b, first 4 bytes, big-endian)."""
    return int.from_bytes(hashlib.blake2b(term.encode(), digest_size=4).digest(), "big")


def document_terms(text: str) -> SparseTerms:
    """``text`` as a stored chunk's sparse vector: BM25 term-frequency weights per term id."""
    counts = _by_id(terms(text))
    length = sum(counts.values())
    norm = K1 * (1 - B + B * length / AVG_TERMS)
    ids = sorted(counts)
    return SparseTerms(tuple(ids), tuple(counts[i] * (K1 + 1) / (counts[i] + norm) for i in ids))


def query_terms(text: str) -> SparseTerms:
    """``text`` as a query's sparse vector: weight 1 per distinct term id (the engine's IDF
    modifier weighs them)."""
    ids = sorted(_by_id(terms(text)))
    return SparseTerms(tuple(ids), tuple(1.0 for _ in ids))


def _by_id(tokens: list[str]) -> Counter[int]:
    return Counter(term_id(t) for t in tokens)
