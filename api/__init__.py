"""The HTTP front door: FastAPI routes that parse, call one submission function,
and shape the answer. Build it with :func:`create_api`; serve it with `ragq serve`."""

from ragq.api.app import create_api
from ragq.api.errors import error_response
from ragq.api.server import ApiServer, serve

__all__ = [
    # building
    "create_api",
    "error_response",
    # serving
    "ApiServer",
    "serve",
]
