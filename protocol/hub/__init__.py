"""The Hub protocol (Scan's engine protocol on stdin/stdout).

``text`` reads and writes Hub lines, ``server`` is ``damka hub``, ``client`` drives any Hub
engine, ``pydraughts`` holds pydraughts' own 8x8 layouts. Imports ``engine`` only.
"""
