"""``python -m engine`` runs the damka command line."""

from .cli import main

raise SystemExit(main())
