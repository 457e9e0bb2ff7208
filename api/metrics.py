"""Prometheus metrics, collected at scrape time from the ledger and the broker.

Each app has its own registry, so several apps (tests) never share or double-register metrics.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

import redis
from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from ragq.ledger import metrics_snapshot, session_scope
from ragq.schemas.statuses import JobStatus
from ragq.settings import Settings
from ragq.workers.broker_transport import priority_lists
from ragq.workers.queues import Queue
from ragq.workers.stack_state import effective_broker_url

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

log = logging.getLogger(__name__)


def queue_depths(broker_url: str | None) -> dict[str, int]:
    """Messages waiting per queue: LLEN of each queue's list on a Redis broker, the message
    count of a passive declare on an AMQP one (RabbitMQ); empty when the broker is neither or
    does not answer."""
    if not broker_url:
        return {}
    if broker_url.startswith(("redis://", "rediss://")):
        return _redis_depths(broker_url)
    if broker_url.startswith(("amqp://", "amqps://", "pyamqp://")):
        return _amqp_depths(broker_url)
    return {}


def _redis_depths(broker_url: str) -> dict[str, int]:
    """A queue's messages are in one list per priority step (:mod:`ragq.workers.broker_transport`):
    its depth is their sum."""
    try:
        client = redis.Redis.from_url(broker_url, socket_timeout=1, socket_connect_timeout=1)
        with client:
            pipe = client.pipeline(transaction=False)
            for queue in Queue:
                for name in priority_lists(queue.value):
                    pipe.llen(name)
            sizes = iter(pipe.execute())
            return {q.value: sum(int(next(sizes)) for _ in priority_lists(q.value))
                    for q in Queue}
    except redis.RedisError as exc:
        log.warning("queue depth unavailable from the Redis broker: %s", exc)
        return {}


def _amqp_depths(broker_url: str) -> dict[str, int]:
    """A queue not declared yet (no worker ever consumed it) counts 0."""
    from kombu import Connection

    out: dict[str, int] = {}
    try:
        with Connection(broker_url, connect_timeout=1) as connection:
            for queue in Queue:
                channel = connection.channel()  # a failed passive declare closes its channel
                try:
                    out[queue.value] = int(channel.queue_declare(
                        queue=queue.value, passive=True).message_count)
                except connection.channel_errors:
                    out[queue.value] = 0
                finally:
                    channel.close()
    except connection.connection_errors as exc:
        log.warning("queue depth unavailable from the AMQP broker: %s", exc)
        return {}
    return out


class LedgerCollector(Collector):
    """Jobs by status, batches in progress, budget exhaustion, cost, webhook failures, queues."""

    def __init__(self, settings: Settings, engine: Engine):
        self._settings = settings
        self._engine = engine

    def collect(self) -> Iterator[Metric]:
        with session_scope(self._engine, readonly=True) as session:
            snap = metrics_snapshot(session)
        by_status = snap.jobs_by_status
        jobs = GaugeMetricFamily("ragq_jobs", "Jobs by status.", labels=["status"])
        for status in JobStatus:
            jobs.add_metric([status.value], by_status.get(status.value, 0))
        yield jobs
        yield GaugeMetricFamily("ragq_batches_in_progress", "Batches in progress.",
                                value=snap.batches_in_progress)
        yield CounterMetricFamily("ragq_budget_exhausted_jobs", "Jobs that ran out of budget.",
                                  value=by_status.get(JobStatus.BUDGET_EXHAUSTED.value, 0))
        yield CounterMetricFamily("ragq_cost_usd", "Model cost recorded in the ledger, USD.",
                                  value=snap.cost_usd)
        yield CounterMetricFamily("ragq_webhook_failed_attempts",
                                  "Webhook attempts without a 2xx answer.",
                                  value=snap.failed_webhook_attempts)
        yield GaugeMetricFamily("ragq_webhook_endpoints_disabled",
                                "Webhook endpoints disabled by a 410.",
                                value=snap.disabled_webhook_endpoints)
        yield from self._recovery()
        depth = GaugeMetricFamily("ragq_queue_depth", "Messages waiting per queue.",
                                  labels=["queue"])
        for queue, n in queue_depths(effective_broker_url(self._settings)).items():
            depth.add_metric([queue], n)
        yield depth


    def _recovery(self) -> Iterator[Metric]:
        """Open and waiting jobs, jobs stalled past the idle time, and what the recovery
        sweep has done (its lease's record in the ledger: every replica reports the same)."""
        from ragq.ledger.stalls import idle_jobs
        from ragq.ledger.sweeper_lease import sweeper_report
        from ragq.ledger.waiting_line import jobs_by_tenant, open_job_count, waiting_job_count

        with session_scope(self._engine, readonly=True) as session:
            open_jobs, waiting = open_job_count(session), waiting_job_count(session)
            stalled = len(idle_jobs(session, idle_s=self._settings.stall_after_s))
            report = sweeper_report(session)
            per_tenant = jobs_by_tenant(session)
        yield GaugeMetricFamily("ragq_open_jobs", "Jobs sent and not ended.", value=open_jobs)
        yield GaugeMetricFamily("ragq_waiting_jobs", "Jobs waiting unsent in the waiting line.",
                                value=waiting)
        tenant_open = GaugeMetricFamily("ragq_tenant_open_jobs",
                                        "Jobs sent and not ended, per tenant (its share of "
                                        "the window).", labels=["tenant"])
        tenant_waiting = GaugeMetricFamily("ragq_tenant_waiting_jobs",
                                           "Jobs waiting unsent, per tenant.", labels=["tenant"])
        for tenant, (n_open, n_waiting) in per_tenant.items():
            tenant_open.add_metric([tenant], n_open)
            tenant_waiting.add_metric([tenant], n_waiting)
        yield tenant_open
        yield tenant_waiting
        yield GaugeMetricFamily("ragq_stalled_jobs", "Open jobs nothing has moved for longer "
                                "than RAGQ_STALL_AFTER_S (the sweeper resumes them).",
                                value=stalled)
        last = report.last_round_at.timestamp() if report and report.last_round_at else 0.0
        yield GaugeMetricFamily("ragq_sweeper_last_round_timestamp_seconds",
                                "When the recovery sweep last ran a round (0: never).",
                                value=last)
        for name, text, value in (
                ("rounds", "Rounds the recovery sweep ran.", report.rounds if report else 0),
                ("resumed_jobs", "Stalled jobs the sweep resumed.",
                 report.resumed_jobs if report else 0),
                ("joined_layers", "Layers whose lost chord join the sweep sent.",
                 report.joined_layers if report else 0),
                ("started_jobs", "Waiting jobs the sweep started.",
                 report.started_jobs if report else 0)):
            yield CounterMetricFamily(f"ragq_sweeper_{name}", text, value=value)


def build_registry(settings: Settings, engine: Engine) -> CollectorRegistry:
    """A registry of its own, with the ledger collector."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(LedgerCollector(settings, engine))
    return registry
