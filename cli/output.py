"""How commands print: rich for people, plain JSON with ``--json`` for scripts."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

from rich.console import Console
from rich.text import Text

console = Console()
err_console = Console(stderr=True)


def emit_json(data: Any) -> None:
    """One JSON document on stdout, nothing else, so scripts can parse it."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()


def fail(message: str, code: int = 1) -> NoReturn:
    """Print an error to stderr and exit with ``code``. The message is one line, never wrapped
    at the terminal's width: logs and ``grep`` see a path or a command whole."""
    err_console.print(Text("error: ", style="bold red") + Text(message), soft_wrap=True)
    raise SystemExit(code)
