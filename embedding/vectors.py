"""Vector arithmetic shared by the embedders: mean pooling and L2 normalisation."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

Matrix = npt.NDArray[np.float32]


def mean_pool(hidden: Matrix, mask: npt.NDArray[np.int64]) -> Matrix:
    """Average the token vectors of ``hidden`` [batch, seq, dim] over real tokens only.

    Padding positions carry hidden states too; leaving them out (the attention mask) is what
    makes a text's vector independent of the batch it was padded in.
    """
    weights = mask[..., None].astype(np.float32)
    summed = (hidden * weights).sum(axis=1)
    pooled: Matrix = (summed / np.clip(weights.sum(axis=1), 1e-9, None)).astype(np.float32)
    return pooled


def l2_normalize(vectors: Matrix) -> Matrix:
    """Rows scaled to unit length, so a dot product is the cosine; zero rows stay zero."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    unit: Matrix = (vectors / np.clip(norms, 1e-12, None)).astype(np.float32)
    return unit
