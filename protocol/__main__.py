"""``python -m protocol`` runs the damka command line."""

from protocol.cli import main

raise SystemExit(main())
