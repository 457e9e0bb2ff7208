"""The OpenAI provider: the model roles over the official ``openai`` client.

``transport`` builds the client and owns the retry loop (shared with the embedder);
``prompts`` and ``wire`` hold each role's messages and answer shape; ``calls`` runs one role
call (structured output, repair, fallback); ``metering`` counts tokens and cost per attempt;
``provider`` wires the roles to the :class:`~providers.base.ModelProvider` interface;
``embeddings`` is the :class:`~schemas.embedder.Embedder` over the same API and client.
"""

from ragq.orchestration.backoff import RetryPolicy
from ragq.providers.openai.calls import RoleCall, RoleCaller
from ragq.providers.openai.embeddings import OpenAIEmbedder
from ragq.providers.openai.provider import OpenAIProvider
from ragq.providers.openai.transport import FailedAttempt, make_client, send

__all__ = [
    # the provider
    "OpenAIProvider",
    "RoleCaller",
    "RoleCall",
    # the embedder (RAGQ_EMBEDDER=openai)
    "OpenAIEmbedder",
    # transport, shared with the embedder (RetryPolicy is orchestration.backoff's)
    "RetryPolicy",
    "FailedAttempt",
    "make_client",
    "send",
]
