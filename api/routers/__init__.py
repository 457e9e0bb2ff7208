"""One router per resource: batches, jobs, sources, and the operational endpoints."""

from ragq.api.routers import batches, jobs, ops, sources

__all__ = ["batches", "jobs", "ops", "sources"]
