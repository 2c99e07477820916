"""damka's front ends: everything that talks to the outside world.

The ``damka`` command line (``cli``), the Hub server and client (``hub``), DXP (``dxp``), the
play web app (``play``), the match runner with its players (``match``), self-play and the fit
of the evaluation (``training``), the Ray cluster (``cluster``) and the databases' command
(``egtb_cli``). Imports ``engine`` (and through it the core); nothing in ``engine`` or
``_fast`` imports this package. The subpackages import each other one way only
(tests/test_layout.py): ``match`` uses ``dxp``, ``hub`` and ``cluster``; ``training`` uses
``match`` and ``cluster``.
"""
