"""``python -m cli`` runs the `ragq` command (useful where the console script is not on PATH)."""

from cli.main import main

main()
