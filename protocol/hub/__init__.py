"""The Hub protocol (Scan's engine protocol on stdin/stdout).

``text`` reads and writes Hub lines, ``server`` is the dialogue of ``damka hub`` (``command``
is the command's ``add_parser`` and ``run``), ``client`` drives any Hub engine, ``pydraughts``
holds pydraughts' own 8x8 layouts. Imports ``engine`` only.
"""
