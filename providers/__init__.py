"""Model providers: the role interface and its implementations (SPEC C13)."""

from typing import TYPE_CHECKING

from providers.base import ModelProvider
from providers.offline import OfflineProvider
from ragq.lazy import lazy_exports

if TYPE_CHECKING:
    from providers.openai import OpenAIProvider

__getattr__ = lazy_exports(__name__, {"OpenAIProvider": "providers.openai"})

__all__ = [
    # the interface
    "ModelProvider",
    # implementations
    "OfflineProvider",
    "OpenAIProvider",
]
