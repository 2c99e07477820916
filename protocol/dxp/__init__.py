"""DXP, the DamExchange protocol over TCP (international draughts).

``codec`` turns messages into value types and frames them (no I/O), ``transport`` writes
them with a deadline, ``convert`` turns DXP positions and moves into the engine's and back,
``records`` keeps finished games, ``session`` is the state machine of one connection,
``listener`` the sockets and the listen/connect loops, ``defaults`` what all of them and the
command assume when not told, ``command`` is ``damka dxp`` (follower and initiator: its
``add_parser`` and ``run``); ``server`` re-exports their names under the old module name.
The match runner's DXP player is protocol.match.dxp_player. Imports ``engine`` and
``protocol.args`` only (never ``protocol.match``).
"""
