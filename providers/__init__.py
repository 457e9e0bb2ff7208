"""Model providers: the role interface and its implementations."""

from typing import TYPE_CHECKING

from ragq.providers.base import ModelProvider
from ragq.providers.offline import OfflineProvider

if TYPE_CHECKING:
    from ragq.providers.openai import OpenAIProvider


def __getattr__(name: str) -> object:
    """``OpenAIProvider`` on first use (PEP 562): an offline worker imports this package and
    must not pay for importing ``openai``."""
    if name == "OpenAIProvider":
        from ragq.providers.openai import OpenAIProvider

        return OpenAIProvider
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    # the interface
    "ModelProvider",
    # implementations
    "OfflineProvider",
    "OpenAIProvider",
]
