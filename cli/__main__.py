"""``python -m cli`` runs the `ragq` command (useful where the console script is not on PATH)."""

from ragq.cli.main import main

main()
