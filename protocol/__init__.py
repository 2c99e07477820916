"""damka's front ends: everything that talks to the outside world.

The ``damka`` command line (``cli``), the Hub server and client (``hub``), DXP (``dxp``), the
play web app (``play``) and the match runner with its players (``match``). Imports ``engine``
(and through it the core); nothing in ``engine`` or ``_fast`` imports this package.
"""
