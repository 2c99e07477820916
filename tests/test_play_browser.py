"""End-to-end: ``damka play`` in a real headless Chromium driven by Playwright.

The server is the real command (``python -m protocol play --no-browser --port 0``) on loopback;
the browser is Debian's /usr/bin/chromium (Playwright never downloads one here), started with
the flags this closed network needs and a fresh profile per run. Every test clicks as a person
would and saves screenshots to tests/artifacts/play/ for a person to look at.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("starlette", reason="the 'play' extra is not installed: pip install -e '.[play]'")

CHROMIUM = "/usr/bin/chromium"
FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "play"
ROOT = Path(__file__).resolve().parents[1]
needs_chromium = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"{CHROMIUM} is missing (Debian: apt-get install chromium; .ci/run installs it)",
)
TIMEOUT_MS = 15_000


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """The real ``damka play`` command on a free loopback port; yields its address."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "protocol", "play", "--no-browser", "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        line = proc.stdout.readline()
        match = re.search(r"(http://127\.0\.0\.1:\d+/)", line)
        assert match, f"no address printed: {line!r} {proc.stderr.read() if proc.poll() is not None else ''}"
        yield match.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def test_the_command_serves_the_page(server):
    with urllib.request.urlopen(server, timeout=10) as response:
        assert response.status == 200
        assert '<svg id="board"' in response.read().decode()


@pytest.fixture(scope="module")
def browser():
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing (Debian: apt-get install chromium; .ci/run installs it)")
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    print(f"\nscreenshots in {ARTIFACTS}")
    with sync_playwright() as p:
        # launch() gives Chromium a fresh temporary profile (user-data-dir) of its own
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=FLAGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser, server):
    """A fresh page (its own storage) on the game, errors in the page failing the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 860}, accept_downloads=True)
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(server)
    wait_ready(page)
    yield page
    context.close()
    assert not errors, errors


# -- helpers ----------------------------------------------------------------------------------


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def wait_ready(page, state: str = "ready") -> None:
    page.wait_for_selector(f'body[data-state="{state}"]')


def game(page) -> dict:
    """The state the page is showing (the page keeps it in its global ``S``)."""
    return page.evaluate("S.game")


def click(page, square: str) -> None:
    page.click(f'#board [data-square="{square}"]')


def ply(page) -> int:
    return int(page.get_attribute("#board", "data-ply"))


def start_position(page, fen: str) -> None:
    """Use the page's own "start from a position" form."""
    before = game(page)["id"]
    if not page.is_visible("#fen"):
        page.click("#setup summary")
    page.fill("#fen", fen)
    page.click("#fen-start")
    page.wait_for_function(f"S.game && S.game.id !== {before!r}")
    wait_ready(page)


def choose(page, select: str, value: str, variant: str | None = None) -> None:
    before = game(page)["id"]
    page.select_option(select, value)
    page.wait_for_function(f"S.game && S.game.id !== {before!r}")
    if variant:
        page.wait_for_selector(f'#board[data-variant="{variant}"]')


def box(page, square: str) -> dict:
    return page.locator(f'#board [data-square="{square}"] rect.dark').bounding_box()


def piece(page, square: str) -> str | None:
    loc = page.locator(f'#board [data-square="{square}"] .piece')
    return loc.get_attribute("data-piece") if loc.count() else None


def move_rows(page) -> list[list[str]]:
    return [[c.strip() for c in row.split("\t")] for row in
            page.inner_text("#moves tbody").strip().splitlines() if row.strip()]


# -- the tests ---------------------------------------------------------------------------------


@needs_chromium
def test_first_visit_plays_english_as_black_against_the_computer(page):
    # the product's rule page on English draughts (one of the rule pages of docs/rules.md,
    # section S): "the American rules are the default; open the game and you play Black
    # against the computer at once"
    g = game(page)
    assert g["variant"]["name"] == "english" and g["opponent"] == "computer" and g["level"] == "medium"
    assert g["human"] == "black" and g["turn"] == "black" and g["ply"] == 0
    assert page.get_attribute("#board", "data-bottom") == "black"
    assert page.input_value("#variant") == "english" and page.input_value("#side") == "black"
    assert page.input_value("#opponent") == "medium"
    assert page.inner_text("#status").startswith("Your move (Black)")
    assert page.inner_text("#first-head") == "Black"
    assert page.locator("#board [data-piece]").count() == 24
    # Black's men (1-12) at the bottom: square 1 below square 32, and they move up the screen
    b1, b32 = box(page, "1"), box(page, "32")
    assert b1["y"] > b32["y"] and piece(page, "1") == "b" and piece(page, "32") == "w"
    assert page.get_attribute("#rules-link", "href") == "/rules/english.html"
    shot(page, "00-first-visit-english")
    click(page, "11")
    click(page, "15")
    page.wait_for_function("S.game.ply === 2")  # our move and the computer's reply
    wait_ready(page)
    g = game(page)
    assert g["moves"][0] == "11-15" and g["turn"] == "black"

    # reloading keeps the game
    page.reload()
    wait_ready(page)
    assert game(page)["id"] == g["id"] and game(page)["moves"] == g["moves"]
    assert page.input_value("#variant") == "english"

    # switching to international: you play White at the bottom and begin
    choose(page, "#variant", "international", variant="international")
    wait_ready(page)
    g = game(page)
    assert g["human"] == "white" and g["turn"] == "white" and g["bottom"] == "white" and g["ply"] == 0
    assert page.get_attribute("#board", "data-bottom") == "white"
    assert page.input_value("#side") == "white" and page.input_value("#opponent") == "medium"
    page.reload()
    wait_ready(page)
    assert game(page)["id"] == g["id"] and game(page)["variant"]["name"] == "international"


@needs_chromium
def test_short_international_game_against_the_computer(page):
    choose(page, "#variant", "international", variant="international")
    wait_ready(page)
    g = game(page)
    assert g["variant"]["name"] == "international" and g["human"] == "white"
    assert page.locator("#board [data-piece]").count() == 40
    # White at the bottom: square 46 is the bottom-left corner and dark, 5 the top-right
    b46, b5 = box(page, "46"), box(page, "5")
    assert b46["y"] > b5["y"] and b46["x"] < b5["x"]
    shot(page, "01-international-start")
    choose(page, "#opponent", "easy")
    for i in range(3):
        legal = game(page)["legal"]
        move = next((m for m in legal if m["capture"]), legal[i % len(legal)])
        for square in move["path"]:
            click(page, square)
        page.wait_for_function(f"S.game.ply === {2 * i + 2}")
        wait_ready(page)
        if i == 0:
            shot(page, "02-international-after-first-reply")
    g = game(page)
    assert len(g["moves"]) == 6
    rows = move_rows(page)
    assert [r[0] for r in rows] == ["1.", "2.", "3."]
    assert [m for r in rows for m in r[1:]] == g["moves"]
    shot(page, "03-international-three-moves")

    # reloading keeps the game
    page.reload()
    wait_ready(page)
    assert game(page)["moves"] == g["moves"] and game(page)["id"] == g["id"]

    # take back: the computer's reply and our move go
    page.click("#takeback")
    page.wait_for_function("S.game.ply === 4")
    wait_ready(page)
    assert game(page)["moves"] == g["moves"][:4]
    assert len(move_rows(page)) == 2
    shot(page, "04-international-after-take-back")


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_multi_capture_by_clicking_the_landing_squares(page):
    choose(page, "#variant", "international", variant="international")
    choose(page, "#opponent", "friend")
    start_position(page, "W:W37:B32,22,23,11,13,44")
    # the capture is compulsory: the capturing man is marked
    assert page.locator('#board [data-square="37"] .forced').count() == 1
    click(page, "37")
    assert page.locator('#board [data-square="28"] .target').count() == 1
    shot(page, "05-capture-selected")
    click(page, "28")  # two captures go on from here: nothing is played yet
    assert ply(page) == 0
    assert page.locator('#board [data-square="17"] .target').count() == 1
    assert page.locator('#board [data-square="19"] .target').count() == 1
    shot(page, "06-capture-first-landing")
    click(page, "17")  # now only 37x6 fits: it is played at once
    page.wait_for_function("S.game.ply === 1")
    assert game(page)["moves"] == ["37x6"]
    wait_ready(page)
    assert piece(page, "32") is None and piece(page, "22") is None and piece(page, "11") is None
    assert piece(page, "6") == "w" and piece(page, "37") is None
    assert move_rows(page)[0][:2] == ["1.", "37x6"]
    shot(page, "07-capture-played")


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_ambiguous_destination_needs_the_landing_square(page):
    choose(page, "#variant", "english", variant="english")
    choose(page, "#opponent", "friend")
    start_position(page, "W:W26:B14,15,22,23")
    click(page, "26")
    click(page, "10")  # both captures end on 10: the page asks for the way
    assert ply(page) == 0
    assert "landing squares" in page.inner_text("#error")
    click(page, "19")
    click(page, "10")
    page.wait_for_function("S.game.ply === 1")
    assert game(page)["moves"] == ["26x19x10"]
    assert piece(page, "23") is None and piece(page, "15") is None and piece(page, "22") == "b"


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_russian_start_position_and_capture_on_as_a_king(page):
    choose(page, "#variant", "russian", variant="russian")
    g = game(page)
    assert g["turn"] == "white" and g["human"] == "white"
    a1, h8 = box(page, "a1"), box(page, "h8")
    assert a1["x"] < h8["x"] and a1["y"] > h8["y"]  # a1 bottom-left, dark
    assert piece(page, "a1") == "w" and piece(page, "h8") == "b" and piece(page, "c3") == "w"
    page.check("#numbers")
    assert page.locator('#board [data-square="a1"] text.number').text_content() == "a1"
    shot(page, "08-russian-start")
    choose(page, "#opponent", "friend")
    start_position(page, "W:Wb6:Bc7,f6,a7")
    click(page, "b6")
    click(page, "d8")  # crowned here, and the capture goes on as a flying king: g5 or h4
    assert ply(page) == 0
    assert page.locator('#board [data-square="g5"] .target').count() == 1
    assert page.locator('#board [data-square="h4"] .target').count() == 1
    click(page, "h4")
    page.wait_for_function("S.game.ply === 1")
    assert game(page)["moves"] == ["b6:h4"]
    wait_ready(page)
    shot(page, "09-russian-king-captured-on")
    assert piece(page, "h4") == "W" and piece(page, "c7") is None and piece(page, "f6") is None


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_italian_start_position_and_men_cannot_take_kings(page):
    choose(page, "#variant", "italian", variant="italian")
    # the Italian board: square 1 top-left, 32 bottom-right, the near-right corner is dark
    one, thirty_two, twenty_nine = box(page, "1"), box(page, "32"), box(page, "29")
    assert one["x"] < thirty_two["x"] and one["y"] < thirty_two["y"]
    assert twenty_nine["y"] == thirty_two["y"] and twenty_nine["x"] > 0  # a1 (bottom-left) is light
    board = page.locator("#board").bounding_box()
    assert abs(thirty_two["x"] + thirty_two["width"] - (board["x"] + board["width"])) < 2
    assert piece(page, "1") == "b" and piece(page, "32") == "w"
    page.check("#numbers")
    shot(page, "10-italian-start")
    page.uncheck("#numbers")
    choose(page, "#opponent", "friend")
    start_position(page, "W:W22:BK18,19")
    # only the man on 22 can move, and only by taking the man on 19 (not the king on 18)
    assert page.locator('#board [data-square="22"] .forced').count() == 1
    click(page, "22")
    assert page.locator('#board [data-square="15"] .target').count() == 1
    assert page.locator('#board [data-square="13"] .target').count() == 0
    shot(page, "11-italian-capture-choices")
    click(page, "13")  # taking the king is not a move: nothing happens
    assert ply(page) == 0
    click(page, "22")
    click(page, "15")
    page.wait_for_function("S.game.ply === 1")
    assert game(page)["moves"] == ["22x15"]
    assert piece(page, "15") == "w" and piece(page, "19") is None and piece(page, "18") == "B"


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_the_game_ends_and_can_be_saved(page, tmp_path):
    choose(page, "#variant", "international", variant="international")
    wait_ready(page)
    start_position(page, "W:W33:B28")
    click(page, "33")
    click(page, "22")
    wait_ready(page, "over")
    result = page.inner_text("#result")
    assert "2-0" in result and "White wins: Black has no pieces left." in result
    assert page.inner_text("#status") == "Game over"
    shot(page, "12-game-over")
    with page.expect_download() as info:
        page.click("#save")
    path = tmp_path / "game.pdn"
    info.value.save_as(path)
    text = path.read_text()
    assert '[Result "2-0"]' in text and "1. 33x22 2-0" in text
    # taking the last move back reopens the game
    page.click("#takeback")
    page.wait_for_function("S.game.ply === 0")
    assert page.is_hidden("#result")


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_friend_game_on_one_screen_with_dragging(page):
    choose(page, "#variant", "english", variant="english")
    assert game(page)["bottom"] == "black"  # the human plays Black from the bottom and begins
    choose(page, "#opponent", "friend")
    g = game(page)
    assert g["opponent"] == "friend" and g["turn"] == "black" and g["bottom"] == "black"
    b11, b15 = box(page, "11"), box(page, "15")
    assert b11["y"] > b15["y"]  # Black's men at the bottom move up the screen
    page.mouse.move(b11["x"] + 50 * b11["width"] / 100, b11["y"] + b11["height"] / 2)
    page.mouse.down()
    page.mouse.move(b15["x"] + b15["width"] / 3, b15["y"] + b15["height"] / 3, steps=8)
    page.mouse.move(b15["x"] + b15["width"] / 2, b15["y"] + b15["height"] / 2, steps=4)
    page.mouse.up()
    page.wait_for_function("S.game.ply === 1")
    click(page, "22")
    click(page, "18")
    page.wait_for_function("S.game.ply === 2")
    assert move_rows(page) == [["1.", "11-15", "22-18"]]
    assert page.inner_text("#first-head") == "Black"
    page.click("#flip")
    assert page.get_attribute("#board", "data-bottom") == "white"
    shot(page, "13-english-friend-flipped")
    page.goto(page.url.split("#")[0] + "rules/english.html")
    assert "Black moves first" in page.inner_text("main")


@needs_chromium
@pytest.mark.slow  # the second tier (pytest -m slow; .ci/run runs it after the plain run)
def test_the_rules_pages_in_the_browser(page, server):
    from engine.variants import VARIANTS

    for v in VARIANTS:
        page.goto(f"{server}rules/{v.name}.html")
        assert page.get_attribute("main", "data-variant") == v.name
        headers = page.locator("table.compare thead th[data-variant]")
        assert headers.count() == len(VARIANTS)
        assert page.locator("table.compare thead th.current").get_attribute("data-variant") == v.name
        assert page.locator("table.compare tbody tr").first.locator("td").count() == len(VARIANTS)
        first = "White" if v.white_starts else "Black"
        assert f"{first} moves first." in page.inner_text("main")
        # the stylesheet is served and applied
        assert page.evaluate("getComputedStyle(document.querySelector('header')).backgroundColor") \
            == "rgb(59, 47, 39)"
        if v.name in ("english", "italian"):
            shot(page, f"14-rules-{v.name}")
    page.goto(f"{server}rules/")
    assert page.url.endswith("/rules/international.html")
    page.click("nav.others a[href='no-forced-capture.html']")
    assert page.get_attribute("main", "data-variant") == "no-forced-capture"
    page.click("a[href='/']")
    wait_ready(page)
    assert game(page)["variant"]["name"] == "english"
