"""Front-door side of ingest: reading input files and submitting ingest runs to the workers."""

from ragq.ingestion.sources import BadLine, read_documents
from ragq.ingestion.submit import IngestReport, ingest_path

__all__ = ["BadLine", "IngestReport", "ingest_path", "read_documents"]
