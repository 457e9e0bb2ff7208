"""The ledger's public map: what the rest of ragq may use, pinned, so a new export is a decision.

The tables, budget arithmetic and the flow's writers stay inside the package: the flow reaches
them through :class:`ragq.ledger.FlowLedger`, the front door through the functions below.
"""

from __future__ import annotations

from ragq import ledger

PUBLIC = {
    "current_revision", "head_revision", "is_up_to_date", "ledger_exists", "make_engine",
    "normalize_url", "read_scope", "session_scope", "upgrade",
    "FlowLedger", "FlowWriter", "MemoryLedger", "SqlFlowLedger",
    "add_job", "batch_errors", "batch_jobs", "cancel_batch", "cancel_job", "create_batch",
    "get_batch", "get_job", "list_batches", "record_input_error", "start_batch",
    "Claimed", "WaitingLine", "claim_due", "claim_next", "open_job_count", "jobs_by_tenant",
    "set_tenant_share", "tenant_share", "tenant_shares",
    "TRAIL_TABLES", "MetricsSnapshot", "batch_cost", "batch_report", "evidence_records",
    "job_ledger", "job_trail", "metrics_snapshot", "ping", "extend_open_deadlines",
    "Resolution", "list_reviews", "resolve_review",
    "create_api_key", "find_api_key", "list_api_keys", "revoke_api_key",
    "UpsertOutcome", "add_ingest_counts", "close_stale_ingest_runs", "create_ingest_run",
    "current_versions",
    "finish_ingest_run", "get_documents", "get_ingest_run", "upsert_document",
    "SourceView", "list_sources", "register_source", "source_schema", "source_names",
    "collection_holds_documents", "sources_holding_documents",
    "ClaimedDelivery", "claim_delivery", "disable_endpoint", "ensure_endpoint",
    "first_attempts", "record_attempt", "schedule_attempt",
    "ApiKeyRow", "BatchInputErrorRow", "BatchRow", "DocumentRow", "IngestRunRow", "JobRow",
    "ReviewRow",
    "LedgerConfigurationError", "LedgerError", "LedgerIntegrityError", "LedgerMigrationError",
    "LedgerNotFoundError", "LedgerNotMigratedError", "LedgerUnavailableError",
}


def test_the_public_map_is_the_pinned_list_once() -> None:
    assert len(ledger.__all__) == len(set(ledger.__all__))
    assert set(ledger.__all__) == PUBLIC


def test_every_public_name_resolves() -> None:
    for name in ledger.__all__:
        assert getattr(ledger, name) is not None, name


def test_every_error_is_a_ledger_error() -> None:
    errors = [getattr(ledger, n) for n in ledger.__all__ if n.endswith("Error")]
    assert all(issubclass(e, ledger.LedgerError) for e in errors)


def test_a_sqlite_ledger_exists_only_once_its_file_does(tmp_path) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    assert not ledger.ledger_exists(url)
    assert not (tmp_path / "ledger.db").exists()  # asking created nothing
    ledger.upgrade(url)
    assert ledger.ledger_exists(url)
    assert ledger.ledger_exists("sqlite:///:memory:")
    assert ledger.ledger_exists("postgresql://u@127.0.0.1:1/none")  # a server's: connecting tells
