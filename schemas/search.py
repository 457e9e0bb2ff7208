"""How a search ranks chunks: the mode, the fusion of a hybrid search, and sparse term vectors.

Shared by every layer: settings name the defaults, the flow puts the mode in its retrieval keys,
the vector stores translate these values into their engine's query.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class SearchMode(StrEnum):
    """What a search ranks by.

    ``dense``: embedding similarity (text and title vectors, see ``vectorstore.fusion``);
    ``sparse``: BM25-style term matching (the ``terms`` sparse vector, IDF weighted by the
    engine); ``hybrid``: both, fused by the engine (:class:`SearchFusion`).
    """

    DENSE = "dense"
    SPARSE = "sparse"
    HYBRID = "hybrid"


class SearchFusion(StrEnum):
    """How a hybrid search fuses its ranked lists in Qdrant's query API.

    ``rrf``: reciprocal rank fusion (ranks only); ``dbsf``: distribution-based score fusion
    (each list's scores normalised by their mean and spread, then summed).
    """

    RRF = "rrf"
    DBSF = "dbsf"


def parse_mode(value: str, *, where: str) -> SearchMode:
    """``value`` as a :class:`SearchMode`; raises ``ValueError`` naming ``where`` and the valid
    modes."""
    try:
        return SearchMode(value.strip().lower())
    except ValueError:
        valid = ", ".join(m.value for m in SearchMode)
        raise ValueError(f"{where}: unknown search mode {value!r}; valid: {valid}") from None


def parse_fusion(value: str, *, where: str) -> SearchFusion:
    """``value`` as a :class:`SearchFusion`; raises ``ValueError`` naming the valid ones."""
    try:
        return SearchFusion(value.strip().lower())
    except ValueError:
        valid = ", ".join(f.value for f in SearchFusion)
        raise ValueError(f"{where}: unknown fusion {value!r}; valid: {valid}") from None


@dataclass(frozen=True)
class SparseTerms:
    """A sparse vector: term ids (unsigned 32-bit, ascending, unique) and their weights."""

    indices: tuple[int, ...]
    values: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.values):
            raise ValueError(
                f"sparse vector has {len(self.indices)} indices but {len(self.values)} values")

    def __bool__(self) -> bool:
        return bool(self.indices)


@dataclass(frozen=True)
class SearchRequest:
    """How one search ranks: the mode and, for ``hybrid``, the fusion. ``terms`` are the
    query's sparse terms, needed by ``sparse`` and ``hybrid``."""

    mode: SearchMode = SearchMode.DENSE
    fusion: SearchFusion = SearchFusion.RRF
    terms: SparseTerms | None = None

    @property
    def label(self) -> str:
        """The mode as keys and logs name it: ``dense``, ``sparse``, ``hybrid-rrf``..."""
        return f"hybrid-{self.fusion.value}" if self.mode is SearchMode.HYBRID else self.mode.value
