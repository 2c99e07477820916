"""``damka match``: engine-against-engine matches with honest clocks.

``runner`` plays the games, ``players``/``engines`` wrap damka, Hub and DXP engines (the DXP
one is ``dxp_player``), ``timecontrol``, ``openings``, ``stats`` and ``report`` do one job
each, ``defaults`` holds what the runner and the command assume when not told, ``command``
is the command's arguments and ``run``, ``main`` the body ``run`` calls. Imports ``engine``,
``protocol.args``, the Hub/DXP clients of ``protocol`` and ``protocol.cluster``
(``--cluster``).
"""
