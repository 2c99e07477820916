"""damka's compiled core (Cython): bitboards, move generation, perft, evaluation and search.

C-level code only; it imports nothing from ``engine`` or ``protocol``.
"""
