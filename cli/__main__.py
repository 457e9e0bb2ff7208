"""``python -m ragq.cli`` runs the `ragq` command (where the console script is not on PATH)."""

from ragq.cli.main import main

main()
