"""`docker/` against the code it packages. No image is built here (no Docker engine on the test
machines); what can be checked without one is: the compose file names every service
docs/operations.md names, gives each ragq service only settings the code reads (and the ones it
needs), runs the Celery app and queues that exist; the Dockerfile installs the whole package;
and, where Docker's compose tool is installed, ``compose config`` accepts the file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tomllib
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
import yaml

from ragq.schemas.tasks import Queue
from ragq.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker" / "compose.yaml"
NEEDED = {"RAGQ_BROKER_URL", "RAGQ_DATABASE_URL", "RAGQ_QDRANT_URL"}
"""What every ragq container needs to reach the servers (else it would look for an embedded
stack inside itself)."""


@pytest.fixture(scope="module")
def services() -> dict[str, Any]:
    return yaml.safe_load(COMPOSE.read_text())["services"]


def _ragq_services(services: dict[str, Any]) -> dict[str, Any]:
    return {name: s for name, s in services.items() if "build" in s}


def _documented_services() -> list[str]:
    """The services in docs/operations.md's table of the compose topology (first column)."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("## The compose topology", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([a-z-]+)` \|", section, flags=re.MULTILINE)


def test_every_service_the_operations_page_names_is_in_the_compose_file(services):
    named = _documented_services()
    assert len(named) >= 8
    assert set(named) == set(services)


def test_ragq_services_set_only_settings_the_code_reads_and_those_it_needs(services):
    known = {f"RAGQ_{name.upper()}" for name in Settings.model_fields}
    ragq = _ragq_services(services)
    assert set(ragq) == {"migrate", "worker-retrieval", "worker-general", "sweeper", "api",
                         "flower"}
    for name, service in ragq.items():
        env = {k for k in service["environment"] if k.startswith("RAGQ_")}
        assert env <= known, (name, env - known)
        assert env >= NEEDED, (name, NEEDED - env)
        assert service["environment"]["RAGQ_BROKER_URL"].startswith("redis://redis:")


def test_workers_run_the_installed_celery_app_on_real_queues_covering_all(services):
    from ragq.workers import app as module

    served: set[str] = set()
    for name, service in _ragq_services(services).items():
        command = service["command"]
        if command[0] == "celery":
            assert command[1:3] == ["-A", "ragq.workers.app"], name
        if "worker" in command:
            queues = command[command.index("-Q") + 1].split(",")
            assert set(queues) <= {q.value for q in Queue}, (name, queues)
            served |= set(queues)
    assert served == {q.value for q in Queue}
    assert module.app.main == "ragq"  # what `celery -A ragq.workers.app` loads


def test_every_long_running_service_restarts_and_the_sweeper_runs(services):
    once = {"migrate"}  # runs to its end, then the others start
    for name, service in services.items():
        if name not in once:
            assert service.get("restart") == "unless-stopped", name
    assert services["sweeper"]["command"] == ["ragq", "sweeper"]


def test_flower_needs_a_password_and_the_api_listens_beyond_loopback(services):
    flower = services["flower"]
    assert flower["environment"]["FLOWER_BASIC_AUTH"].startswith("${FLOWER_BASIC_AUTH:?")
    assert flower["environment"]["FLOWER_UNAUTHENTICATED_API"] == "false"
    api = services["api"]["command"]
    assert api[:2] == ["ragq", "serve"] and api[api.index("--host") + 1] == "0.0.0.0"


def test_the_image_installs_every_package_folder_and_runs_the_ragq_app():
    dockerfile = (ROOT / "docker" / "Dockerfile").read_text()
    assert re.search(r"^COPY \. /src$", dockerfile, flags=re.MULTILINE)
    assert "pip install --no-cache-dir /src" in dockerfile
    assert '"-A", "ragq.workers.app"' in dockerfile
    ignored = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
               if line.strip() and not line.startswith("#")]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    folders = set(pyproject["tool"]["setuptools"]["package-dir"].values())
    needed = folders | {"pyproject.toml", "README.md"}
    assert not [f for f in needed if any(fnmatch(f, pattern) for pattern in ignored)]


def _compose_tool() -> list[str] | None:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    if shutil.which("docker") and subprocess.run(
            ["docker", "compose", "version"], capture_output=True).returncode == 0:
        return ["docker", "compose"]
    return None


@pytest.mark.skipif(_compose_tool() is None,
                    reason="no Docker compose tool (apt-get install -y docker-compose)")
def test_compose_config_accepts_the_file_and_asks_for_the_flower_password(tmp_path):
    tool = _compose_tool() or []
    env = {k: v for k, v in os.environ.items() if k != "FLOWER_BASIC_AUTH"}
    config = [*tool, "-f", str(COMPOSE), "config"]
    env["GRAFANA_ADMIN_PASSWORD"] = "secret"
    good = subprocess.run(config, env={**env, "FLOWER_BASIC_AUTH": "admin:secret"},
                          capture_output=True, text=True, timeout=60)
    assert good.returncode == 0, good.stderr
    resolved = yaml.safe_load(good.stdout)["services"]
    assert resolved["worker-general"]["environment"]["RAGQ_DATABASE_URL"].startswith(
        "postgresql://")
    missing = subprocess.run(config, env=env, capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "FLOWER_BASIC_AUTH" in missing.stderr
