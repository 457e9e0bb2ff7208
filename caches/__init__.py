"""The caches across jobs: evidence of retrieval requests and plans of questions, on
the stack's Redis-protocol server with TTLs. A cache never fails a job: a server error is a miss.

Build them with ``ragq.workers.wiring.build_evidence_cache`` / ``build_plan_cache``. An evidence hit
must be re-checked with ``orchestration.cache_check.usable`` before use, and deleted when unusable.
"""

from ragq.caches.base import EvidenceCache, PlanCache
from ragq.caches.connection import REDIS_SCHEMES, connect, resolve_cache_url
from ragq.caches.guard import SERVER_ERRORS, UNREACHABLE, ServerGuard
from ragq.caches.keys import (
    EVIDENCE_PREFIX,
    PLAN_KEY_VERSION,
    PLAN_PREFIX,
    evidence_key,
    evidence_pattern,
    plan_key,
)
from ragq.caches.local import DisabledEvidenceCache, DisabledPlanCache
from ragq.caches.redis_caches import RedisEvidenceCache, RedisPlanCache

__all__ = [
    # interfaces
    "EvidenceCache",
    "PlanCache",
    # on a Redis-protocol server
    "RedisEvidenceCache",
    "RedisPlanCache",
    "connect",
    "resolve_cache_url",
    "REDIS_SCHEMES",
    # without a server: always a miss
    "DisabledEvidenceCache",
    "DisabledPlanCache",
    # keys on the server
    "EVIDENCE_PREFIX",
    "PLAN_KEY_VERSION",
    "PLAN_PREFIX",
    "evidence_key",
    "evidence_pattern",
    "plan_key",
    # failures are misses
    "SERVER_ERRORS",
    "UNREACHABLE",
    "ServerGuard",
]
