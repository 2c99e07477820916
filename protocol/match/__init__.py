"""``damka match``: engine-against-engine matches with honest clocks.

``runner`` plays the games, ``players``/``engines`` wrap damka, Hub and DXP engines (the DXP
one is ``dxp_player``), ``timecontrol``, ``openings``, ``stats`` and ``report`` do one job
each, ``main`` is the command. Imports ``engine``, the Hub/DXP clients of ``protocol`` and
``protocol.cluster`` (``--cluster``).
"""
