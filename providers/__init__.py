"""Model providers: the role interface and its implementations (SPEC C13)."""

from typing import TYPE_CHECKING

from ragq.lazy import lazy_exports
from ragq.providers.base import ModelProvider
from ragq.providers.offline import OfflineProvider

if TYPE_CHECKING:
    from ragq.providers.openai import OpenAIProvider

__getattr__ = lazy_exports(__name__, {"OpenAIProvider": "ragq.providers.openai"})

__all__ = [
    # the interface
    "ModelProvider",
    # implementations
    "OfflineProvider",
    "OpenAIProvider",
]
