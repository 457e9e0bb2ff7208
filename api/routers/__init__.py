"""One router per resource: batches, jobs, and the operational endpoints."""

from ragq.api.routers import batches, jobs, ops

__all__ = ["batches", "jobs", "ops"]
