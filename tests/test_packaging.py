"""``pip install .`` puts one top-level package of ours in site-packages: ``ragq``, with every
folder of the repository beneath it and the ledger's migrations as package data."""

from __future__ import annotations

import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# What a fresh virtual environment holds before anything is installed into it.
SKIPPED = (".venv", ".git", ".ragq", "build", "*.egg-info", ".pytest_cache", ".hypothesis",
           ".ruff_cache")
BASELINE = {"pip", "setuptools", "_distutils_hack", "pkg_resources", "distutils-precedence.pth",
            "__pycache__"}


@pytest.fixture(scope="module")
def site_packages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    wheels, venv = tmp_path_factory.mktemp("wheels"), tmp_path_factory.mktemp("venv")
    # Built from a copy (a build writes into its source tree) with this environment's
    # setuptools (the test extra brings one that builds wheels), installed into an empty
    # environment without its dependencies: nothing is downloaded.
    source = tmp_path_factory.mktemp("source") / "ragq"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(*SKIPPED, "__pycache__"))
    subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                    "--no-build-isolation", "-w", str(wheels), str(source)], check=True)
    (wheel,) = wheels.glob("ragq-*.whl")
    # An environment without its own pip (seeding one took ~6 s of the fast suite), filled by
    # this environment's pip pointed at it: the install lands in its site-packages all the same.
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", "--no-index", str(wheel)], check=True, cwd=venv)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             check=True, capture_output=True, text=True).stdout.strip()
    assert purelib != sysconfig.get_paths()["purelib"]
    return Path(purelib)


def test_one_top_level_package_is_installed(site_packages):
    ours = {p.name for p in site_packages.iterdir()
            if p.name not in BASELINE and not p.name.startswith(("pip-", "setuptools-"))}
    assert {name for name in ours if not name.endswith(".dist-info")} == {"ragq"}
    (dist_info,) = [name for name in ours if name.endswith(".dist-info")]
    assert dist_info.startswith("ragq-")


def test_every_module_installs_under_ragq_with_the_migrations(site_packages):
    package = site_packages / "ragq"
    for source in ROOT.glob("*/**/*.py"):
        folder = source.relative_to(ROOT).parts[0]
        if folder in ("tests", "bench", "docker", "examples", *SKIPPED) or "migrations" in \
                source.parts:
            continue
        inside = source.relative_to(ROOT / "ragq") if folder == "ragq" \
            else source.relative_to(ROOT)
        assert (package / inside).is_file(), f"{source.relative_to(ROOT)} is not installed"
    assert (package / "ledger" / "migrations" / "env.py").is_file()
    assert sorted(p.name for p in (package / "ledger" / "migrations" / "versions").glob("0*.py"))
