"""The checkout reads like the installed package: ``ragq/<folder>`` is a link to each top-level
folder the wheel maps to ``ragq.<folder>``, so a type checker, an IDE or ``python -c`` at the
repository root resolves ``ragq.orchestration`` without the editable install's import hook."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _mapped_folders() -> dict[str, str]:
    """``ragq.<name>`` -> folder, from the wheel's package-dir mapping."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    mapping = config["tool"]["setuptools"]["package-dir"]
    return {name.removeprefix("ragq."): folder for name, folder in mapping.items()
            if name != "ragq"}


def test_every_mapped_folder_has_its_link_under_ragq() -> None:
    folders = _mapped_folders()
    assert len(folders) >= 15
    for name, folder in folders.items():
        link = ROOT / "ragq" / name
        assert link.is_symlink(), link
        assert link.readlink() == Path("..") / folder, (link, link.readlink())
        assert link.resolve() == (ROOT / folder).resolve()


def test_a_plain_checkout_imports_every_folder_as_ragq_without_the_install() -> None:
    # The editable install's finder is taken out, so only the files on disk can answer.
    script = (
        "import importlib, sys\n"
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f).lower()]\n"
        "sys.path_importer_cache.clear()\n"
        f"for name in {sorted(_mapped_folders())!r}:\n"
        "    module = importlib.import_module('ragq.' + name)\n"
        "    print(name, module.__file__)\n"
        "import ragq.orchestration.flow\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                          text=True, check=False, timeout=120)
    assert proc.returncode == 0, proc.stderr
    seen = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    for name in _mapped_folders():
        assert Path(seen[name]).resolve().is_relative_to(ROOT), seen[name]
