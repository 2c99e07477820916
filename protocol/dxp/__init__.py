"""DXP, the DamExchange protocol over TCP (international draughts).

``codec`` turns messages into value types and frames them (no I/O), ``transport`` writes
them with a deadline, ``server`` is ``damka dxp`` (follower and initiator), ``player``
drives a DXP peer for the match runner. Imports ``engine`` and ``protocol.match.players``.
"""
