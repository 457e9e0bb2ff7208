"""What an operator of the compose topology watches: the Prometheus alert rules and the Grafana
dashboard in `docker/` are well formed, and every metric they read is one `/metrics` really
exports (read from a live registry on a real ledger, not from a list kept by hand). Where
Prometheus' `promtool` is installed it checks the rules too; without it, a small PromQL reader
here checks brackets, range durations and function names."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client import generate_latest

from ragq.api.metrics import build_registry
from ragq.ledger import make_engine
from ragq.settings import build_settings
from tests.ledger_template import migrated

DOCKER = Path(__file__).resolve().parents[2] / "docker"
ALERTS = DOCKER / "prometheus" / "alerts.yml"
DASHBOARD = DOCKER / "grafana" / "dashboards" / "ragq.json"
FUNCTIONS = {"min_over_time", "max_over_time", "avg_over_time", "deriv", "rate", "increase",
             "delta", "time", "sum", "max", "min", "avg", "absent", "humanizeDuration"}
DURATION = re.compile(r"^\d+[smhdw]$")
METRIC = re.compile(r"\bragq_[a-z_]+\b")


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    """Names of the series `/metrics` serves (counters with their ``_total``)."""
    home = tmp_path_factory.mktemp("metrics")
    settings = build_settings(home=home, broker_url="memory://")
    migrated(settings.ledger_url)
    engine = make_engine(settings.ledger_url)
    try:
        text = generate_latest(build_registry(settings, engine)).decode()
    finally:
        engine.dispose()
    samples = set(re.findall(r"^(ragq_\w+)[{ ]", text, flags=re.MULTILINE))
    declared = set(re.findall(r"^# TYPE (\S+) gauge$", text, flags=re.MULTILINE))
    return samples | declared  # a labelled gauge with no series yet (no broker) is declared


def check_promql(expr: str) -> None:
    """Raises AssertionError for unbalanced brackets, a bad range or an unknown function."""
    pairs = {")": "(", "]": "[", "}": "{"}
    stack: list[str] = []
    for char in expr:
        if char in "([{":
            stack.append(char)
        elif char in pairs:
            assert stack and stack.pop() == pairs[char], f"unbalanced {char!r} in {expr!r}"
    assert not stack, f"unclosed {stack} in {expr!r}"
    for inside in re.findall(r"\[([^\]]*)\]", expr):
        for part in inside.split(":"):
            assert DURATION.match(part.strip()), f"bad range [{inside}] in {expr!r}"
    for call in re.findall(r"\b([a-zA-Z_]+)\s*\(", expr):
        assert call in FUNCTIONS, f"unknown function {call}() in {expr!r}"


def rules() -> list[dict[str, Any]]:
    document = yaml.safe_load(ALERTS.read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def test_alert_rules_cover_stalls_growing_queues_and_a_silent_sweeper(exported: set[str]):
    found = {rule["alert"]: rule for rule in rules()}
    assert set(found) == {"RagqJobStalled", "RagqQueueOnlyGrows", "RagqSweeperNotRunning"}
    for name, rule in found.items():
        check_promql(rule["expr"])
        assert DURATION.match(rule["for"]), name
        assert rule["labels"]["severity"] in {"page", "warn"}, name
        assert rule["annotations"]["summary"], name
        used = set(METRIC.findall(rule["expr"]))
        assert used and used <= exported, (name, used - exported)


def test_the_dashboard_shows_what_the_issue_asks_from_exported_metrics(exported: set[str]):
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for panel in dashboard["panels"] for t in panel["targets"]]
    for expr in exprs:
        check_promql(expr)
    used = {m for expr in exprs for m in METRIC.findall(expr)}
    assert used <= exported, used - exported
    assert {"ragq_jobs", "ragq_queue_depth", "ragq_open_jobs", "ragq_waiting_jobs",
            "ragq_sweeper_resumed_jobs_total", "ragq_budget_exhausted_jobs_total",
            "ragq_cost_usd_total"} <= used
    ids = [panel["id"] for panel in dashboard["panels"]]
    assert len(ids) == len(set(ids))


def test_the_promql_reader_rejects_what_prometheus_would():
    for bad in ["rate(ragq_jobs[5m]", "ragq_jobs[5x]", "rat(ragq_jobs[5m])",
                "min_over_time(x[30m:1q])"]:
        with pytest.raises(AssertionError):
            check_promql(bad)


def test_prometheus_loads_the_rules_and_grafana_the_dashboard_folder():
    config = yaml.safe_load((DOCKER / "prometheus" / "prometheus.yml").read_text())
    assert config["rule_files"] == ["/etc/prometheus/alerts.yml"]
    targets = {c["job_name"]: c["static_configs"][0]["targets"] for c in config["scrape_configs"]}
    assert targets["ragq-api"] == ["api:8000"]
    provider = yaml.safe_load(
        (DOCKER / "grafana" / "provisioning" / "dashboards" / "ragq.yml").read_text())
    assert provider["providers"][0]["options"]["path"] == "/var/lib/grafana/dashboards"


@pytest.mark.skipif(shutil.which("promtool") is None,
                    reason="promtool (Prometheus) is not installed; the PromQL reader above "
                           "checks the rules instead")
def test_promtool_accepts_the_rules():
    checked = subprocess.run(["promtool", "check", "rules", str(ALERTS)], capture_output=True,
                             text=True, timeout=60)
    assert checked.returncode == 0, checked.stdout + checked.stderr
