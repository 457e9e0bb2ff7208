"""One router per resource: batches, jobs, and the operational endpoints."""

from api.routers import batches, jobs, ops

__all__ = ["batches", "jobs", "ops"]
