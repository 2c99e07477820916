"""engine.printable: text from engines and peers that acts on nothing it is printed to."""

from __future__ import annotations

import sys
import textwrap
import unicodedata

from engine.printable import printable
from protocol.hub.client import HubClient


def test_controls_become_escapes_and_line_breaks_blanks():
    assert printable("plain tekst, é, ü, 王") == "plain tekst, é, ü, 王"
    assert printable("a\x1b[2Jb") == "a\\x1b[2Jb"
    assert printable("one\ntwo\r\nthree") == "one two three"
    assert printable("\u202eevil\u200b") == "\\u202eevil\\u200b"
    assert printable("x\u2028y\x00") == "x y\\x00"  # (a line separator is a line break)
    everything = printable("".join(map(chr, range(0x3000))) + "\U000e0001")
    acting = {"Cc", "Cf", "Cs", "Zl", "Zp"}  # controls, format, surrogates, separators
    assert not [c for c in everything if unicodedata.category(c) in acting]


def test_a_hub_engines_name_is_made_printable(tmp_path):
    script = tmp_path / "named.py"
    script.write_text(textwrap.dedent('''
        import sys
        for line in sys.stdin:
            word = line.split()[0] if line.split() else ""
            if word == "hub":
                print('id name="evil\\x1b]0;owned\\x07" version=1\\nwait', flush=True)
            elif word == "init":
                print("ready", flush=True)
            elif word == "quit":
                break
    '''))
    client = HubClient([sys.executable, str(script)], variant="international")
    client.start()
    try:
        name = client.id["name"]
        assert name.startswith("evil") and "\x1b" not in name and "\x07" not in name
        assert client.name == name
    finally:
        client.quit()

