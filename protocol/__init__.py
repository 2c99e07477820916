"""damka's front ends: everything that talks to the outside world.

The ``damka`` command line (``cli`` assembles the commands: each is a module with
``add_parser`` and ``run``, the engine-level ones beside it as ``*_command``, the front ends'
in their packages; ``args`` holds the argument checkers they all use), the Hub server and
client (``hub``), DXP (``dxp``), the play web app (``play``), the match runner with its players
(``match``), self-play and the fit of the evaluation (``training``) and the Ray cluster
(``cluster``). Imports ``engine`` (and through it the core); nothing in ``engine`` or
``_fast`` imports this package. The subpackages import each other one way only
(tests/test_layout.py): ``match`` uses ``dxp``, ``hub`` and ``cluster``; ``training`` uses
``match`` and ``cluster``.
"""
