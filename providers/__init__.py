"""Model providers: the role interface and its implementations (SPEC C13)."""

from providers.base import ModelProvider
from providers.offline import OfflineProvider

__all__ = [
    # the interface
    "ModelProvider",
    # implementations
    "OfflineProvider",
]
