"""``python -m protocol`` runs the damka command line."""

from protocol.cli import main

if __name__ == "__main__":  # (not when a spawned worker process imports it)
    raise SystemExit(main())
