"""Training the learned evaluation: self-play data (``damka selfplay``) and the fit (``damka tune``).

Imports ``engine`` (search, games, evaluation features); nothing in ``engine`` imports it.
"""
