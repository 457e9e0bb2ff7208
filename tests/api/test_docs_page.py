"""``/docs`` works with no network: Swagger UI comes from the installed package, and a real
headless browser, cut off from every host but loopback, lists every operation of the API.

The browser test runs wherever Debian's ``chromium`` (or another Chromium/Chrome) is installed
(``.ci/run`` installs it) and is skipped only where none is.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from ragq.api import ApiServer, create_api
from ragq.settings import build_settings

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
# What the brief asks of a headless browser here, plus: every host name but loopback resolves
# to nothing, so a page that still reached for a CDN would render empty.
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1")


def _browser() -> str | None:
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


@pytest.fixture(scope="module")
def api_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An API on a loopback port; no stack behind it (the docs page needs none)."""
    settings = build_settings(home=tmp_path_factory.mktemp("docs-home"))
    with ApiServer(settings) as server:
        yield server.base_url


def _operations(tmp_path: Path) -> set[tuple[str, str]]:
    """(METHOD, path) of every operation in the API's OpenAPI document."""
    schema = create_api(build_settings(home=tmp_path)).openapi()
    return {(method.upper(), path) for path, item in schema["paths"].items() for method in item}


def test_the_docs_page_loads_only_files_the_server_serves(api_url: str) -> None:
    page = httpx.get(f"{api_url}/docs")
    assert page.status_code == 200
    assets = re.findall(r'(?:src|href)="([^"]+)"', page.text)
    assert assets and all(url.startswith("/") for url in assets), assets  # no CDN
    for url in assets:
        served = httpx.get(api_url + url)
        assert served.status_code == 200 and served.content, url
    assert "SwaggerUIBundle" in httpx.get(f"{api_url}/docs/static/swagger-ui-bundle.js").text


def test_redoc_is_not_offered_as_a_blank_page(api_url: str) -> None:
    assert httpx.get(f"{api_url}/redoc").status_code == 404


@pytest.mark.skipif(_browser() is None, reason="no Chromium/Chrome installed "
                    "(apt-get install -y chromium)")
def test_a_headless_browser_offline_lists_every_operation(api_url: str, tmp_path: Path) -> None:
    command = [_browser() or "", *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
               "--virtual-time-budget=20000", "--dump-dom", f"{api_url}/docs"]
    dom = subprocess.run(command, capture_output=True, text=True, timeout=120, check=True).stdout
    shown = set(re.findall(
        r'opblock-summary-method">([A-Z]+)<.*?data-path="([^"]+)"', dom, flags=re.DOTALL))
    assert shown == _operations(tmp_path), dom[:2000]
