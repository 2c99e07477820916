"""The JSON API of ``damka play``: every endpoint and every error, with Starlette's in-process
test client (no network). A rejected request must answer 4xx with a JSON error and leave the
game exactly as it was."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from concurrent.futures import Future
from html.parser import HTMLParser
from urllib.parse import quote

import pytest

pytest.importorskip("starlette", reason="the 'play' extra is not installed: pip install -e '.[play]'")

from starlette.testclient import TestClient  # noqa: E402

from engine import Board  # noqa: E402
from engine.search import SearchResult  # noqa: E402
from engine.squares import square_names  # noqa: E402
from engine.variants import VARIANTS, CapturePromotion, Precedence  # noqa: E402
from protocol.play import session as session_module  # noqa: E402
from protocol.play.app import MAX_BODY, create_app  # noqa: E402
from protocol.play.session import SessionStore  # noqa: E402

#: a position of international draughts with two 3-piece captures that share their first landing
TWO_ROUTES = "W:W37:B32,22,23,11,13,44"


@pytest.fixture
def client() -> TestClient:
    return TestClient(create_app(), raise_server_exceptions=True)


def new_game(client: TestClient, **fields) -> dict:
    r = client.post("/api/games", json=fields)
    assert r.status_code == 201, r.text
    assert r.headers["location"] == f"/api/games/{r.json()['id']}"  # where the game now is
    return r.json()


def error_of(response, status: int, code: str) -> str:
    assert response.status_code == status, response.text
    body = response.json()
    assert body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]["message"]


def snapshot(client: TestClient, game_id: str) -> dict:
    r = client.get(f"/api/games/{game_id}")
    assert r.status_code == 200
    return r.json()


# -- the page ----------------------------------------------------------------------------------


def test_the_page_and_its_files_are_served(client):
    r = client.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert '<svg id="board"' in r.text and "/static/play.js" in r.text
    assert client.get("/static/play.js").status_code == 200
    assert client.get("/static/play.css").status_code == 200


@pytest.mark.parametrize("page", [v.name for v in VARIANTS] + ["no-forced-capture"])
def test_every_rule_set_has_a_rules_page(client, page):
    r = client.get(f"/rules/{page}.html")
    assert r.status_code == 200
    assert f'data-variant="{page}"' in r.text
    assert "Captures" in r.text or "capture" in r.text


def test_rules_index_redirects(client):
    r = client.get("/rules", follow_redirects=False)
    assert r.status_code in (302, 307) and r.headers["location"].endswith("/rules/international.html")
    r = client.get("/rules/", follow_redirects=False)
    assert r.status_code in (302, 307) and r.headers["location"].endswith("/rules/international.html")


# -- the rules pages, written from the rules records ----------------------------------------------

RULES_PAGES = [v.name for v in VARIANTS] + ["no-forced-capture"]


class _Page(HTMLParser):
    """A rules page read back: the comparison table, the marked columns and rows, the text."""

    def __init__(self, text: str):
        super().__init__()
        self.columns: list[str] = []
        self.current: list[str] = []
        self.rows: dict[str, list[str]] = {}
        self.differs: set[str] = set()
        self.text: list[str] = []
        self._row: str | None = None
        self._cell: list[str] | None = None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "th" and "data-variant" in a:
            self.columns.append(a["data-variant"])
            if a.get("class") == "current":
                self.current.append(a["data-variant"])
        elif tag == "tr" and "data-rule" in a:
            self._row = a["data-rule"]
            self.rows[self._row] = []
            if a.get("class") == "differs":
                self.differs.add(self._row)
        elif tag == "td" and self._row:
            self._cell = []

    def handle_endtag(self, tag):
        if tag == "td" and self._cell is not None:
            self.rows[self._row].append("".join(self._cell))
            self._cell = None
        elif tag == "tr":
            self._row = None

    def handle_data(self, data):
        self.text.append(data)
        if self._cell is not None:
            self._cell.append(data)

    def cell(self, rule: str, variant) -> str:
        return self.rows[rule][self.columns.index(variant.name)]


def rules_page(client, name: str) -> _Page:
    r = client.get(f"/rules/{quote(name)}.html")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    return _Page(r.text)


def _men(variant) -> int:
    return bin(Board(variant).position.white).count("1")


def expected_cells(v) -> dict[str, object]:
    """What each row of the table says about rule set v, computed from its record: a string is
    the whole cell, a tuple lists words the cell must contain."""
    yes = {True: "yes", False: "no"}
    try:
        v.with_forced_capture(False)
        house = True
    except ValueError:
        house = False
    numbers = [n for n in (v.draws.king_moves, v.draws.endgame_three, v.draws.endgame_two,
                           v.draws.no_progress) if n]
    first, last = min(square_names(v)), max(square_names(v))  # a1 and h8 when algebraic
    return {
        "board": f"{v.size}x{v.size}",
        "men": str(_men(v)),
        "first": "White" if v.white_starts else "Black",
        "compulsory": ("yes", "house rule") if house else "yes",
        "backwards": yes[v.men_capture_backwards],
        "flying": yes[v.flying_kings],
        "men_take_kings": yes[v.men_capture_kings],
        "most_pieces": yes[v.precedence in (Precedence.QUANTITY, Precedence.QUANTITY_THEN_KINGS,
                                            Precedence.ITALIAN)],
        # the wording of docs/rules.md (the product rules' comparison table, section S)
        "precedence": {Precedence.FREE: "free", Precedence.QUANTITY: "free",
                       Precedence.QUANTITY_THEN_KINGS: ("most kings",),
                       Precedence.ITALIAN: ("with a king", "most kings", "earliest king"),
                       Precedence.KING_PRIORITY: "if a king can capture, a king must capture",
                       }[v.precedence],
        "promotion": {CapturePromotion.PASS: "crowned only if the capture ends there",
                      CapturePromotion.CONTINUE_AS_KING: ("crowned", "continues capturing as a king"),
                      CapturePromotion.STOP: "crowned, move ends"}[v.capture_promotion],
        "removed": "at once" if v.removes_captured_at_once else "at the end of the move",
        "corner": "right" if v.turned_board else "left",
        "notation": ((f"{first}-{last}" if v.algebraic else f"1-{v.squares}"),
                     f"with {v.capture_separator}"),
        "draws": ("threefold repetition" if v.draws.repetitions == 3 else "repetition",
                  *(str(n) for n in numbers)),
        "gametype": str(v.gametype),
        "names": (v.name, *v.aliases),
    }


@pytest.mark.parametrize("page", RULES_PAGES)
def test_the_comparison_table_agrees_with_the_records(client, page):
    p = rules_page(client, page)
    assert p.columns == [v.name for v in VARIANTS]  # one column per rule set, in registry order
    assert set(p.rows) == set(expected_cells(VARIANTS[0]))
    assert p.current == ([] if page == "no-forced-capture" else [page])
    for v in VARIANTS:
        for rule, expected in expected_cells(v).items():
            cell = p.cell(rule, v)
            if isinstance(expected, tuple):
                assert all(word in cell for word in expected), (v.name, rule, cell, expected)
            else:
                assert cell == expected, (v.name, rule, cell, expected)
    for rule, cells in p.rows.items():
        assert len(cells) == len(VARIANTS), rule


def test_the_comparison_table_matches_the_product_rules(client):
    # spot checks against the table of the product rules (docs/rules.md, section S)
    p = rules_page(client, "english")
    by = {v.name: v for v in VARIANTS}
    assert [p.cell("board", v) for v in VARIANTS] == ["10x10"] + ["8x8"] * 6
    assert p.cell("men", by["international"]) == "20" and p.cell("men", by["czech"]) == "12"
    assert [p.cell("backwards", by[n]) for n in ("english", "russian", "brazilian", "spanish", "italian",
                                                 "czech", "international")] == \
        ["no", "yes", "yes", "no", "no", "no", "yes"]
    assert [p.cell("flying", by[n]) for n in ("english", "russian", "brazilian", "spanish", "italian",
                                              "czech", "international")] == \
        ["no", "yes", "yes", "yes", "no", "yes", "yes"]
    assert [p.cell("most_pieces", by[n]) for n in ("english", "russian", "brazilian", "spanish", "italian",
                                                   "czech", "international")] == \
        ["no", "no", "yes", "yes", "yes", "no", "yes"]
    assert p.cell("men_take_kings", by["italian"]) == "no"
    assert p.cell("first", by["english"]) == "Black" and p.cell("first", by["international"]) == "White"
    assert p.cell("promotion", by["russian"]) == "crowned, continues capturing as a king"
    assert p.cell("removed", by["english"]) == "at once"
    assert p.cell("removed", by["brazilian"]) == "at the end of the move"
    assert p.cell("corner", by["italian"]) == "right" and p.cell("corner", by["spanish"]) == "right"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_a_rules_page_states_the_records_rules(client, variant):
    v = variant
    text = " ".join(" ".join(rules_page(client, v.name).text).split())
    first, second = ("White", "Black") if v.white_starts else ("Black", "White")
    assert f"{first} moves first." in text
    if v.name == "english":  # the default, as the English rule page says (docs/rules.md S)
        assert "is the default: open the game and you play Black at the bottom against the computer" in text
    else:
        assert f"You play {first} at the bottom and begin; the computer plays {second}" in text
    assert f"Each side has {_men(v)} men" in text
    assert f"only the {v.squares} dark squares are used" in text
    assert ("Kings fly" in text) == v.flying_kings
    assert ("Men capture forwards and backwards" in text) == v.men_capture_backwards
    assert ("A man may not capture a king." in text) == (not v.men_capture_kings)
    assert ("goes on capturing as a king" in text) == (v.capture_promotion == CapturePromotion.CONTINUE_AS_KING)
    assert ("Tick No forced capture to play it with the house rule" in text) == (v.size == 8)
    assert f"PDN game type {v.gametype}." in text
    for n in (v.draws.king_moves, v.draws.endgame_three, v.draws.endgame_two, v.draws.no_progress):
        if n:
            assert f"{n} more moves each" in text or f"{n} moves by each side" in text
    assert "Tips" in text and "Other rule sets" in text
    # the words that belong to this rule set alone: its lead and its tips
    from protocol.play import rules_pages

    assert rules_pages._words(v.name, "lead") and rules_pages._words(v.name, "tip")
    assert " ".join(rules_pages._words(v.name, "lead")) in text


def test_the_rules_pages_keep_what_the_old_pages_said(client):
    def text(page):
        return " ".join(" ".join(rules_page(client, page).text).split())

    assert "square 1 is at the top left as White sees the board" in text("international")
    assert "Black on 1-20, White on 31-50, with two empty rows between" in text("international")
    assert "the Turkish strike" in text("international")
    assert "Black on 1-12, White on 21-32" in text("english")
    assert "kings do not fly" in text("english")
    assert "a capture c3:e5" in text("russian")
    assert "White on rows 1-3, Black on rows 6-8" in text("brazilian")
    assert "right to left and bottom to top: square 1 is at the bottom right" in text("spanish")
    assert "Quality rule" in text("spanish")
    assert "then the capture that meets a king earliest" in text("italian")
    assert "If a king can capture, a king must capture" in text("czech")
    house = text("no-forced-capture")
    assert "International draughts (10x10) is always played with compulsory capture." in house
    assert "the most pieces in Brazilian draughts, Spanish draughts and Italian draughts" in house
    assert "house rule for any 8x8 rule set" in text("czech")


def test_every_value_of_the_capture_rules_has_its_words():
    from protocol.play import rules_pages

    for value in (*Precedence, *CapturePromotion):
        words = rules_pages.wording(value)
        assert words.cell and words.text, value
    cells = {rules_pages.wording(value).cell for value in CapturePromotion}
    assert len(cells) == len(CapturePromotion)  # each way of crowning reads differently


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_every_name_in_the_registry_has_its_rules_page(client, variant):
    for name in dict.fromkeys((variant.name, variant.hub_name, *variant.aliases, str(variant.gametype))):
        r = client.get(f"/rules/{quote(name)}.html")
        assert r.status_code == 200, name
        assert f'data-variant="{variant.name}"' in r.text, name
    if variant.size == 8:
        r = client.get(f"/rules/{variant.name}-nocapture.html")
        assert r.status_code == 200 and 'data-variant="no-forced-capture"' in r.text


def test_rules_files_and_unknown_rules_pages(client):
    assert client.get("/rules/rules.css").status_code == 200
    assert "text/css" in client.get("/rules/rules.css").headers["content-type"]
    for name in ("chess", "page", "prose"):
        assert client.get(f"/rules/{name}.html").status_code == 404
    assert client.get("/rules/prose.txt").status_code == 404


def test_a_new_rule_set_gets_its_column_everywhere(monkeypatch):
    from dataclasses import replace

    from engine.variants import RUSSIAN
    from protocol.play import rules_pages

    extra = replace(RUSSIAN, name="pool<&>", title='Pool "checkers" <b>', aliases=("x&y",))
    monkeypatch.setattr(rules_pages, "VARIANTS", VARIANTS + (extra,))
    rules_pages.render.cache_clear()
    try:
        for page in RULES_PAGES:
            html_text = rules_pages.render(page)
            p = _Page(html_text)
            assert p.columns == [v.name for v in VARIANTS] + ["pool<&>"]
            assert all(len(cells) == len(VARIANTS) + 1 for cells in p.rows.values())
            assert p.rows["names"][-1] == "pool<&>, russian, x&y"
            assert "<b>" not in p.rows["names"][-1] and 'Pool "checkers" <b>' not in html_text
            assert "Pool &quot;checkers&quot; &lt;b&gt;" in html_text
            assert '<a href="pool&lt;&amp;&gt;.html">' in html_text  # in the list of rule sets too
    finally:
        rules_pages.render.cache_clear()


def test_unknown_routes_and_methods_are_json_errors(client):
    error_of(client.get("/api/nothing"), 404, "not_found")
    error_of(client.get("/api/games"), 405, "method_not_allowed")
    error_of(client.delete("/api/games/abc"), 405, "method_not_allowed")
    assert client.get("/no-such-page").status_code == 404


# -- variants and new games ------------------------------------------------------------------


def test_variants_lists_the_seven_rule_sets(client):
    data = client.get("/api/variants").json()
    names = [v["name"] for v in data["variants"]]
    assert names == ["international", "english", "russian", "brazilian", "spanish", "italian", "czech"]
    by_name = {v["name"]: v for v in data["variants"]}
    assert by_name["english"]["first"] == "black" and by_name["international"]["first"] == "white"
    assert not by_name["international"]["house_rule"] and by_name["russian"]["house_rule"]
    assert data["levels"] == ["easy", "medium", "hard"]
    assert by_name["international"]["label"] == "International draughts (10x10)"
    assert by_name["english"]["label"] == "English draughts / American checkers (8x8)"


def test_default_game_is_english_with_the_human_black_at_the_bottom(client):
    # the product's rule page on English draughts (one of the rule pages of docs/rules.md,
    # section S): "the American rules are the default; open the game and you play Black
    # against the computer at once"
    defaults = client.get("/api/variants").json()["defaults"]
    assert defaults == {"variant": "english", "opponent": "computer", "level": "medium"}
    g = new_game(client)
    assert g["variant"]["name"] == "english" and g["variant"]["size"] == 8
    assert g["opponent"] == "computer" and g["level"] == "medium"
    assert g["human"] == "black" and g["bottom"] == "black" and g["turn"] == "black"
    assert not g["computer_to_move"] and g["variant"]["forced_capture"]
    assert len(g["squares"]) == 32 and len(g["pieces"]) == 24
    assert all(g["pieces"][str(n)] == "b" for n in range(1, 13))
    assert sorted(m["pdn"] for m in g["legal"]) == ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"]
    assert g["moves"] == [] and g["result"] is None and not g["can_take_back"]
    assert client.post("/api/games", content=b"").json()["variant"]["name"] == "english"


@pytest.mark.parametrize("variant", VARIANTS, ids=lambda v: v.name)
def test_the_human_begins_in_every_rule_set(client, variant):
    g = new_game(client, variant=variant.name)
    first = "white" if variant.white_starts else "black"
    assert g["human"] == first and g["bottom"] == first and g["turn"] == first
    assert not g["computer_to_move"] and g["legal"]


def test_international_game_against_the_computer(client):
    g = new_game(client, variant="international")
    assert g["variant"]["name"] == "international" and g["variant"]["size"] == 10
    assert g["opponent"] == "computer" and g["level"] == "medium"
    assert g["human"] == "white" and g["bottom"] == "white" and g["turn"] == "white"
    assert len(g["squares"]) == 50 and len(g["pieces"]) == 40
    assert sorted(g["legal"], key=lambda m: m["pdn"])[0]["pdn"] == "31-26"
    assert len(g["legal"]) == 9
    assert g["moves"] == [] and g["result"] is None and not g["can_take_back"]
    assert g["fen"] == g["start_fen"]


@pytest.mark.parametrize(
    "variant, corner_checks, first, pieces",
    [
        # square -> (row, col) on the drawn board, White at the bottom (row 0 at the top)
        ("international", {"1": (0, 1), "46": (9, 0), "50": (9, 8)}, "white", {"1": "b", "50": "w"}),
        ("english", {"1": (0, 1), "4": (0, 7), "29": (7, 0), "32": (7, 6)}, "black", {"1": "b", "32": "w"}),
        ("russian", {"a1": (7, 0), "h8": (0, 7), "c3": (5, 2)}, "white", {"a1": "w", "h8": "b"}),
        ("brazilian", {"a1": (7, 0), "h8": (0, 7)}, "white", {"a1": "w", "h8": "b"}),
        ("czech", {"a1": (7, 0), "h8": (0, 7)}, "white", {"a1": "w", "h8": "b"}),
        # Italian and Spanish: the near-right corner (h1) is a playing square
        ("italian", {"1": (0, 0), "4": (0, 6), "29": (7, 1), "32": (7, 7)}, "white", {"1": "b", "32": "w"}),
        ("spanish", {"1": (7, 7), "4": (7, 1), "32": (0, 0)}, "white", {"1": "w", "32": "b"}),
    ],
)
def test_start_positions_and_board_geometry(client, variant, corner_checks, first, pieces):
    g = new_game(client, variant=variant)
    places = {s["name"]: (s["row"], s["col"]) for s in g["squares"]}
    for name, place in corner_checks.items():
        assert places[name] == place, name
    assert all((r + c) % 2 == (1 if variant not in ("italian", "spanish") else 0) for r, c in places.values())
    assert g["turn"] == first and g["human"] == first and g["bottom"] == first
    for name, piece in pieces.items():
        assert g["pieces"][name] == piece
    assert len(g["pieces"]) == (40 if variant == "international" else 24)


def test_new_game_options(client):
    g = new_game(client, variant="russian", forced_capture=False, opponent="friend", level="hard")
    assert g["variant"]["forced_capture"] is False and g["opponent"] == "friend"
    assert g["human"] is None and g["bottom"] == "white"
    g = new_game(client, variant="russian-nocapture")
    assert g["variant"]["forced_capture"] is False
    g = new_game(client, variant="international", human="black", level="easy")
    assert g["human"] == "black" and g["bottom"] == "black" and g["computer_to_move"]


def test_new_game_from_fen_and_moves(client):
    g = new_game(client, variant="international", fen=TWO_ROUTES, opponent="friend")
    assert g["start_fen"].startswith("W:") and g["pieces"]["37"] == "w"
    assert {m["pdn"] for m in g["legal"]} == {"37x6", "37x8"}
    assert g["capture_forced"]
    replay = new_game(client, variant="international", moves=["32-28", "19-23", "28x19"])
    assert replay["moves"] == ["32-28", "19-23", "28x19"]
    assert replay["turn"] == "black" and replay["ply"] == 3
    assert replay["move_rows"] == [{"number": 1, "first": "32-28", "second": "19-23"},
                                   {"number": 2, "first": "28x19", "second": None}]


def test_move_rows_when_the_second_player_starts(client):
    g = new_game(client, variant="international", fen="B:W31-50:B1-20", opponent="friend", moves=["19-23"])
    assert g["move_rows"] == [{"number": 1, "first": "...", "second": "19-23"}]


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"variant": "chess"}, 400, "unknown_variant"),
        ({"variant": 7}, 400, "bad_request"),
        ({"variant": "international", "forced_capture": False}, 400, "bad_request"),
        ({"forced_capture": "no"}, 400, "bad_request"),
        ({"opponent": "robot"}, 400, "bad_request"),
        ({"level": "grandmaster"}, 400, "bad_request"),
        ({"human": "red"}, 400, "bad_request"),
        ({"seed": True}, 400, "bad_request"),
        ({"colour": "white"}, 400, "bad_request"),
        ({"fen": "W:W99:B1"}, 422, "invalid_fen"),
        ({"fen": "nonsense"}, 422, "invalid_fen"),
        ({"moves": "32-28"}, 400, "bad_request"),
        ({"moves": [32]}, 400, "bad_request"),
        ({"variant": "international", "moves": ["32-28", "32-28"]}, 422, "illegal_move"),
        ({"moves": ["hello"]}, 422, "illegal_move"),
        ({"variant": "international", "fen": "W:W33:B28", "moves": ["33x22", "1-6"]}, 422, "game_over"),
        ([1, 2], 400, "bad_request"),
        ("international", 400, "bad_request"),
    ],
)
def test_new_game_errors(client, body, status, code):
    before = len(client.app.state.games)
    error_of(client.post("/api/games", json=body), status, code)
    assert len(client.app.state.games) == before


def test_malformed_bodies(client):
    error_of(client.post("/api/games", content=b"{not json", headers={"content-type": "application/json"}),
             400, "bad_json")
    error_of(client.post("/api/games", content=b"\xff\xfe", headers={"content-type": "application/json"}),
             400, "bad_json")
    error_of(client.post("/api/games", content=b"<xml/>", headers={"content-type": "application/xml"}),
             415, "unsupported_media_type")
    # what a page of another site may send without a CORS preflight is refused: text/plain,
    # a form, or a body of no type
    for kind in ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                 "multipart/form-data", None):
        before = len(client.app.state.games)
        headers = {} if kind is None else {"content-type": kind}
        error_of(client.post("/api/games", content=b'{"variant": "english"}', headers=headers),
                 415, "unsupported_media_type")
        assert len(client.app.state.games) == before
    big = json.dumps({"moves": ["32-28"] * (MAX_BODY // 8)}).encode()
    error_of(client.post("/api/games", content=big, headers={"content-type": "application/json"}),
             413, "too_large")
    # an empty body is a default game
    assert client.post("/api/games", content=b"").status_code == 201


# -- state, legal moves, moves ------------------------------------------------------------------


def test_state_and_legal_moves(client):
    g = new_game(client, variant="international", fen=TWO_ROUTES)
    assert snapshot(client, g["id"]) == g
    r = client.get(f"/api/games/{g['id']}/moves")
    assert r.status_code == 200
    moves = {m["pdn"]: m for m in r.json()["moves"]}
    assert moves["37x6"]["path"] == ["37", "28", "17", "6"]
    assert moves["37x6"]["captured"] == ["11", "22", "32"]
    assert moves["37x8"]["from"] == "37" and moves["37x8"]["to"] == "8" and moves["37x8"]["capture"]


def test_unknown_game(client):
    for r in (client.get("/api/games/nope"), client.get("/api/games/nope/moves"),
              client.post("/api/games/nope/move", json={"move": "32-28"}),
              client.post("/api/games/nope/engine"), client.post("/api/games/nope/takeback"),
              client.get("/api/games/nope/pdn")):
        error_of(r, 404, "unknown_game")


def test_move_by_text_and_by_path(client):
    g = new_game(client, variant="international", opponent="friend")
    r = client.post(f"/api/games/{g['id']}/move", json={"move": "32-28"})
    assert r.status_code == 200
    s = r.json()
    assert s["moves"] == ["32-28"] and s["turn"] == "black" and s["pieces"]["28"] == "w"
    assert s["last_move"]["path"] == ["32", "28"] and s["version"] == 1 and s["can_take_back"]
    s = client.post(f"/api/games/{g['id']}/move", json={"path": ["19", "23"]}).json()
    assert s["moves"] == ["32-28", "19-23"]
    s = client.post(f"/api/games/{g['id']}/move", json={"move": "28x19"}).json()
    assert s["moves"][-1] == "28x19" and "23" not in s["pieces"]


def test_multi_capture_by_path(client):
    g = new_game(client, variant="international", fen=TWO_ROUTES, opponent="friend")
    s = client.post(f"/api/games/{g['id']}/move", json={"path": ["37", "28", "19", "8"]}).json()
    assert s["moves"] == ["37x8"] and s["pieces"] == {"8": "w", "11": "b", "22": "b", "44": "b"}


@pytest.mark.parametrize(
    "body, status, code",
    [
        ({"move": "32-27"}, 422, "illegal_move"),
        ({"move": "37x6x8"}, 422, "illegal_move"),
        ({"move": "37x28"}, 422, "illegal_move"),
        ({"move": "hello"}, 422, "invalid_move"),
        ({"path": ["37", "28"]}, 422, "illegal_move"),
        ({"path": ["37", "28", "17"]}, 422, "illegal_move"),
        ({"path": ["37", "99"]}, 422, "invalid_move"),
        ({"path": ["37"]}, 400, "bad_request"),
        ({"path": [37, 28]}, 400, "bad_request"),
        ({"path": "37-28"}, 400, "bad_request"),
        ({"move": "37x6", "path": ["37", "28", "17", "6"]}, 400, "bad_request"),
        ({}, 400, "bad_request"),
        ({"move": 3728}, 400, "bad_request"),
        ({"move": "37x6", "promote": True}, 400, "bad_request"),
        (None, 400, "bad_request"),
    ],
)
def test_bad_moves_change_nothing(client, body, status, code):
    g = new_game(client, variant="international", fen=TWO_ROUTES, opponent="friend")
    if body is None:
        r = client.post(f"/api/games/{g['id']}/move")
    else:
        r = client.post(f"/api/games/{g['id']}/move", json=body)
    error_of(r, status, code)
    assert snapshot(client, g["id"]) == g


def test_ambiguous_move_text(client):
    # English: the man on 26 takes 22 and 14 (over 17) or 23 and 15 (over 19), both to 10
    g = new_game(client, variant="english", fen="W:W26:B14,15,22,23", opponent="friend")
    assert sorted(m["pdn"] for m in g["legal"]) == ["26x17x10", "26x19x10"]
    message = error_of(client.post(f"/api/games/{g['id']}/move", json={"move": "26x10"}), 422,
                       "ambiguous_move")
    assert "26x17x10" in message and "26x19x10" in message
    assert snapshot(client, g["id"]) == g
    s = client.post(f"/api/games/{g['id']}/move", json={"path": ["26", "19", "10"]}).json()
    assert s["moves"] == ["26x19x10"] and sorted(s["pieces"]) == ["10", "14", "22"]


def test_not_your_turn_against_the_computer(client):
    g = new_game(client, variant="international", human="black", level="easy")
    error_of(client.post(f"/api/games/{g['id']}/move", json={"move": "32-28"}), 409, "not_your_turn")
    assert snapshot(client, g["id"]) == g


def test_house_rule_lets_a_capture_be_skipped(client):
    forced = new_game(client, variant="brazilian", fen="W:Wc3:Bd4,h8", opponent="friend")
    assert [m["pdn"] for m in forced["legal"]] == ["c3xe5"] and forced["capture_forced"]
    free = new_game(client, variant="brazilian", forced_capture=False, fen="W:Wc3:Bd4,h8", opponent="friend")
    assert {m["pdn"] for m in free["legal"]} == {"c3xe5", "c3-b4"} and not free["capture_forced"]
    s = client.post(f"/api/games/{free['id']}/move", json={"move": "c3-b4"}).json()
    assert s["moves"] == ["c3-b4"]


def test_rule_specific_captures(client):
    # Russian: a man crowned during a capture goes on as a flying king
    g = new_game(client, variant="russian", fen="W:Wb6:Bc7,f6,a7", opponent="friend")
    assert {m["pdn"] for m in g["legal"]} == {"b6:g5", "b6:h4"}
    s = client.post(f"/api/games/{g['id']}/move", json={"path": ["b6", "d8", "h4"]}).json()
    assert s["pieces"]["h4"] == "W"
    # Italian: a man may not capture a king
    g = new_game(client, variant="italian", fen="W:W22:BK18,19", opponent="friend")
    assert [m["pdn"] for m in g["legal"]] == ["22x15"]


# -- the end of a game ---------------------------------------------------------------------------


def test_game_end_no_pieces(client):
    g = new_game(client, variant="international", fen="W:W33:B28", level="easy")
    s = client.post(f"/api/games/{g['id']}/move", json={"path": ["33", "22"]}).json()
    assert s["result"] == {"result": "2-0", "winner": "white", "reason": "no pieces",
                           "message": "White wins: Black has no pieces left."}
    assert s["legal"] == [] and not s["computer_to_move"]
    error_of(client.post(f"/api/games/{g['id']}/move", json={"move": "22-17"}), 409, "game_over")
    error_of(client.post(f"/api/games/{g['id']}/engine"), 409, "game_over")
    pdn = client.get(f"/api/games/{g['id']}/pdn").text
    assert '[Result "2-0"]' in pdn and "1. 33x22 2-0" in pdn and '[FEN "W:W33:B28"]' in pdn


def test_field_errors_say_what_is_wanted(client):
    assert "must be a whole number" in error_of(client.post("/api/games", json={"seed": "7"}),
                                                400, "bad_request")
    assert "must be true or false" in error_of(
        client.post("/api/games", json={"forced_capture": 1}), 400, "bad_request")
    g = new_game(client, variant="international", opponent="friend")
    assert "2 to 64 square names" in error_of(
        client.post(f"/api/games/{g['id']}/move", json={"path": ["32"] * 65}), 400, "bad_request")


def test_a_set_up_position_with_one_side_empty_names_the_loser(client):
    """White to move, Black has nothing: White has won, and Black is the side that has no
    pieces (not the side to move); a position with no pieces at all is no game."""
    g = new_game(client, variant="english", fen="W:W20:B", opponent="friend")
    assert g["result"] == {"result": "1-0", "winner": "white", "reason": "no pieces",
                           "message": "White wins: Black has no pieces left."}
    g = new_game(client, variant="english", fen="B:W:B5", opponent="friend")
    assert g["result"]["message"] == "Black wins: White has no pieces left."
    error_of(client.post("/api/games", json={"variant": "english", "fen": "W:W:B"}),
             422, "invalid_fen")


def test_game_end_no_legal_move(client):
    # English: Black's man on 28 can only step to 32, where a white man stands
    g = new_game(client, variant="english", fen="W:W32,K17:B28", opponent="friend")
    s = client.post(f"/api/games/{g['id']}/move", json={"move": "17-13"}).json()
    assert s["result"] == {"result": "1-0", "winner": "white", "reason": "no legal move",
                           "message": "White wins: Black has no legal move."}


def test_draw_by_threefold_repetition(client):
    g = new_game(client, variant="english", fen="W:WK29:BK4", opponent="friend")
    gid = g["id"]
    for text in ["29-25", "4-8", "25-29", "8-4", "29-25", "4-8", "25-29"]:
        s = client.post(f"/api/games/{gid}/move", json={"move": text}).json()
        assert s["result"] is None, text
    s = client.post(f"/api/games/{gid}/move", json={"move": "8-4"}).json()
    assert s["result"]["result"] == "1/2-1/2" and s["result"]["winner"] is None
    assert s["result"]["reason"] == "threefold repetition"
    assert s["result"]["message"].startswith("Draw: the same position occurred three times")


# -- the computer ----------------------------------------------------------------------------------


@pytest.mark.parametrize("level, limit", [("easy", 0.3 + 1.0), ("hard", 1.5 + 1.0)])
def test_engine_answers_in_time(client, level, limit):
    """Within the level's MOVE_TIME and a second that a loaded machine may add (the request's
    own cost is a few milliseconds on an idle one)."""
    g = new_game(client, variant="international", level=level, seed=1)
    s = client.post(f"/api/games/{g['id']}/move", json={"move": "32-28"}).json()
    assert s["computer_to_move"]
    start = time.perf_counter()
    r = client.post(f"/api/games/{g['id']}/engine")
    assert time.perf_counter() - start < limit
    assert r.status_code == 200
    s = r.json()
    assert s["ply"] == 2 and s["turn"] == "white" and not s["computer_to_move"] and not s["thinking"]
    assert s["last_move"]["pdn"] == s["moves"][-1]


def test_engine_plays_first_when_the_human_is_second(client):
    g = new_game(client, variant="english", human="white", level="easy")
    assert g["computer_to_move"] and g["turn"] == "black" and g["bottom"] == "white"
    s = client.post(f"/api/games/{g['id']}/engine").json()
    assert s["ply"] == 1 and s["turn"] == "white"


def test_engine_errors(client):
    g = new_game(client, variant="international", level="easy")
    error_of(client.post(f"/api/games/{g['id']}/engine"), 409, "not_computer_turn")
    f = new_game(client, variant="international", opponent="friend")
    error_of(client.post(f"/api/games/{f['id']}/engine"), 409, "no_computer")
    assert snapshot(client, g["id"]) == g and snapshot(client, f["id"]) == f


def test_concurrent_engine_requests_play_one_move():
    app = create_app()
    with TestClient(app) as client:
        g = new_game(client, variant="international", human="black", level="medium", seed=3)
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: client.post(f"/api/games/{g['id']}/engine"), range(2)))
        oks = [a for a in answers if a.status_code == 200]
        assert oks, [a.text for a in answers]
        for a in answers:
            assert a.status_code == 200 or a.json()["error"]["code"] == "not_computer_turn"
        assert snapshot(client, g["id"])["ply"] == 1


def test_a_search_for_an_old_position_is_dropped():
    store = SessionStore()
    s = store.create({"variant": "international", "level": "easy", "moves": ["32-28", "19-23"]})
    before = s.state()
    stale = Future()
    stale.set_result(SearchResult(best_move=next(iter(s.game.board.legal_moves)), ponder_move=None,
                                  score=0, depth=1, seldepth=1, nodes=1, time=0.0, pv=()))
    version = s.version
    s.take_back()  # the game changes while the search "runs"
    s._commit(stale, version)
    assert s.state()["ply"] == before["ply"] - 2
    # a failing search is reported, not raised
    broken: Future = Future()
    broken.set_exception(RuntimeError("boom"))
    s.play({"move": "32-28"})
    s._commit(broken, s.version)
    assert "boom" in s.state()["engine_error"] and s.game.ply == 1


# -- take-back ---------------------------------------------------------------------------------------


def test_take_back_against_the_computer_takes_two_plies(client):
    g = new_game(client, variant="international", level="easy", seed=2)
    client.post(f"/api/games/{g['id']}/move", json={"move": "32-28"})
    s = client.post(f"/api/games/{g['id']}/engine").json()
    assert s["ply"] == 2
    s = client.post(f"/api/games/{g['id']}/takeback").json()
    assert s["ply"] == 0 and s["fen"] == g["fen"] and s["turn"] == "white" and not s["can_take_back"]
    error_of(client.post(f"/api/games/{g['id']}/takeback"), 409, "nothing_to_take_back")


def test_take_back_in_a_friend_game_takes_one_ply(client):
    g = new_game(client, variant="international", opponent="friend", moves=["32-28", "19-23"])
    s = client.post(f"/api/games/{g['id']}/takeback").json()
    assert s["moves"] == ["32-28"] and s["turn"] == "black"


def test_take_back_ends_a_finished_game(client):
    g = new_game(client, variant="international", fen="W:W33:B28", opponent="friend")
    s = client.post(f"/api/games/{g['id']}/move", json={"move": "33x22"}).json()
    assert s["result"]
    s = client.post(f"/api/games/{g['id']}/takeback").json()
    assert s["result"] is None and s["pieces"] == {"33": "w", "28": "b"}


def test_take_back_with_only_the_computers_move_is_refused(client):
    g = new_game(client, variant="international", human="black", level="easy")
    s = client.post(f"/api/games/{g['id']}/engine").json()
    assert s["ply"] == 1 and not s["can_take_back"]
    error_of(client.post(f"/api/games/{g['id']}/takeback"), 409, "nothing_to_take_back")
    error_of(client.post(f"/api/games/{g['id']}/takeback", content=b"{oops",
                         headers={"content-type": "application/json"}), 400, "bad_json")
    message = error_of(client.post(f"/api/games/{g['id']}/takeback", json={"plies": 2}), 400,
                       "bad_request")
    assert message == "unknown field(s) plies (this request takes none)"
    error_of(client.post(f"/api/games/{g['id']}/engine", json=[]), 400, "bad_request")
    answer = client.post(f"/api/games/{g['id']}/takeback", json={})
    error_of(answer, 409, "nothing_to_take_back")


# -- PDN -----------------------------------------------------------------------------------------


def test_pdn_download(client):
    g = new_game(client, variant="russian", opponent="friend", moves=["c3-d4", "f6-g5"])
    r = client.get(f"/api/games/{g['id']}/pdn")
    assert r.status_code == 200
    assert r.headers["content-disposition"].startswith("attachment;")
    assert ".pdn" in r.headers["content-disposition"]
    assert '[GameType "25,W,8,8,A0,0"]' in r.text and "1. c3-d4 f6-g5 *" in r.text
    assert '[Result "*"]' in r.text


# -- the store -------------------------------------------------------------------------------------


def test_the_oldest_game_is_dropped():
    app = create_app(SessionStore(limit=2))
    client = TestClient(app)
    first = new_game(client)
    second = new_game(client)
    client.get(f"/api/games/{first['id']}")  # used: now the newest
    new_game(client)
    assert client.get(f"/api/games/{first['id']}").status_code == 200
    error_of(client.get(f"/api/games/{second['id']}"), 404, "unknown_game")


def test_a_dropped_game_lets_its_engine_go_at_once():
    """No reference cycle keeps a dropped game (and its engine's hash table and search
    thread) alive until a full garbage collection."""
    import gc
    import weakref

    gc.disable()
    try:
        app = create_app(SessionStore(limit=1))
        client = TestClient(app)
        first = new_game(client, variant="international", level="easy", human="black")
        session = app.state.games.get(first["id"])
        assert client.post(f"/api/games/{first['id']}/engine").status_code == 200
        engine = weakref.ref(session._engine)
        session = weakref.ref(session)
        new_game(client)  # the first game is dropped
        deadline = time.monotonic() + 10
        while (session() is not None or engine() is not None) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert session() is None and engine() is None
    finally:
        gc.enable()


def test_restoring_a_game_from_its_moves(client):
    g = new_game(client, variant="italian", opponent="friend", moves=["21-17", "10-14"])
    again = new_game(client, variant="italian", opponent="friend", fen=g["start_fen"], moves=g["moves"])
    assert again["fen"] == g["fen"] and again["moves"] == g["moves"] and again["id"] != g["id"]


# -- the command and its imports ----------------------------------------------------------------


def test_engine_and_hub_do_not_load_the_web_code():
    # the parser loads the play command's own light modules (its arguments and defaults), and
    # nothing else of the package or of the web libraries
    light = ("protocol.play", "protocol.play.command", "protocol.play.defaults")
    code = ("import sys, protocol.cli; protocol.cli.build_parser(); "
            "print(sorted(m for m in sys.modules if m.startswith(('starlette', 'uvicorn', "
            f"'protocol.play')) and m not in {light!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_play_command_is_listed():
    from protocol.cli import build_parser

    parser = build_parser()
    args = parser.parse_args(["play", "--port", "0", "--no-browser"])
    assert args.port == 0 and args.no_browser and args.host == "127.0.0.1"


def test_open_browser_without_a_display(monkeypatch):
    from protocol.play import server

    monkeypatch.setattr(server.sys, "platform", "linux")
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    called = []
    monkeypatch.setattr(server.webbrowser, "open", lambda *a, **k: called.append(a))
    assert server.open_browser("http://127.0.0.1:1/") is False
    assert called == []


def test_open_browser_failure_is_harmless(monkeypatch):
    from protocol.play import server

    monkeypatch.setattr(server.sys, "platform", "linux")
    monkeypatch.setenv("DISPLAY", ":0")

    def broken(*args, **kwargs):
        raise RuntimeError("no browser")

    monkeypatch.setattr(server.webbrowser, "open", broken)
    assert server.open_browser("http://127.0.0.1:1/") is True  # the thread swallows the error


def test_url_for():
    from protocol.play.server import url_for

    assert url_for("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert url_for("0.0.0.0", 80) == "http://127.0.0.1:80/"
    assert url_for("::1", 8000) == "http://[::1]:8000/"


def test_session_limits_are_sane():
    assert session_module.MOVE_TIME["hard"] <= 2.0
    assert session_module.MOVE_TIME["easy"] < session_module.MOVE_TIME["hard"]
