"""Training the learned evaluation: self-play data (``damka selfplay``) and the fit (``damka tune``).

Imports ``engine`` (search, games, evaluation features), ``protocol.match`` (the openings
reader) and ``protocol.cluster``; nothing in ``engine`` imports it.
"""
