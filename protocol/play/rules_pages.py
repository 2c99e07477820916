"""The rules pages of ``damka play``, written from the rules records when they are asked for.

One template (``static/rules/page.html``) and a few lines of prose per rule set
(``static/rules/prose.txt``: its lead and tips). Every rule fact on a page (board, setup, who
begins, moves, captures, promotion, draws, notation, names) and the comparison table of all
rule sets are written here from engine.variants, so a rule set added there gets its page, its
column in every table and its line in every list by itself. All text is HTML-escaped; the
wording may use **bold** and *italic*.
"""

from __future__ import annotations

import html
import re
from functools import cache
from string import Template
from typing import Callable, NamedTuple

from engine.board import Board
from engine.squares import FILES, parse_square, row_col, square_at, square_name
from engine.variants import (
    VARIANTS,
    CapturePromotion,
    DrawRules,
    Precedence,
    UnknownVariantError,
    Variant,
    get_variant,
)

from . import STATIC_DIR
from .session import DEFAULT_LEVEL, DEFAULT_VARIANT, LEVEL_NAMES

__all__ = ["HOUSE_RULE_PAGE", "ROWS", "page_names", "canonical_page", "render", "menu_label",
           "short_title", "house_rule_allowed", "comparison", "wording"]

HOUSE_RULE_PAGE = "no-forced-capture"
RULES_DIR = STATIC_DIR / "rules"
NUMBER_WORDS = {1: "one", 2: "two", 3: "three", 4: "four", 5: "five"}


# -- small words ------------------------------------------------------------------------------


def inline(text: str) -> str:
    """Text as HTML: escaped, then **bold** and *italic*."""
    out = html.escape(text, quote=False)
    out = re.sub(r"\*\*(.+?)\*\*", r"<b>\1</b>", out)
    return re.sub(r"\*(.+?)\*", r"<i>\1</i>", out)


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def _colour(white: bool) -> str:
    return "White" if white else "Black"


def _count(n: int) -> str:
    return NUMBER_WORDS.get(n, str(n))


def _join(words: list[str]) -> str:
    """"a", "a and b", "a, b and c"."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def short_title(v: Variant) -> str:
    """"English draughts / American checkers": the title without its parenthesis."""
    return v.title.split(" (")[0]


def menu_label(v: Variant) -> str:
    """The rule set as the page's Rules menu lists it."""
    return f"{short_title(v)} ({v.size}x{v.size})"


def house_rule_allowed(v: Variant) -> bool:
    """Whether the "no forced capture" house rule can be played with this rule set."""
    try:
        v.with_forced_capture(False)
    except ValueError:
        return False
    return True


# -- the board, as drawn with White at the bottom ----------------------------------------------


def _drawn(v: Variant, s: int) -> tuple[int, int]:
    """Row (0 at the top) and column (0 at the left) of internal square s on the drawn board."""
    row, col = row_col(v.size, s)
    return row, (v.size - 1 - col if v.turned_board else col)


def _place(v: Variant, s: int) -> str:
    row, col = _drawn(v, s)
    return f"{'top' if row < v.size // 2 else 'bottom'} {'left' if col < v.size // 2 else 'right'}"


class Setup(NamedTuple):
    """The start position: the men of each side (internal squares)."""

    white: tuple[int, ...]
    black: tuple[int, ...]


@cache
def _setup(v: Variant) -> Setup:
    white, black, _, _ = Board(v).position
    return Setup(*(tuple(s for s in range(v.squares) if bits >> s & 1) for bits in (white, black)))


def _spans(numbers) -> str:
    """"1-12", "1-3, 5": sorted numbers with the runs written as ranges."""
    runs: list[list[int]] = []
    for n in sorted(numbers):
        if runs and n == runs[-1][1] + 1:
            runs[-1][1] = n
        else:
            runs.append([n, n])
    return ", ".join(f"{a}-{b}" if a != b else str(a) for a, b in runs)


def _numbers(v: Variant, squares: tuple[int, ...]) -> set[int]:
    """The square numbers of these squares, or their row numbers (1 at the bottom) if algebraic."""
    if v.algebraic:
        return {v.size - _drawn(v, s)[0] for s in squares}
    return {int(square_name(v, s)) for s in squares}


def _sides(v: Variant, setup: Setup) -> str:
    """"Black on 1-12, White on 21-32": where the men stand, the lower numbers first."""
    sides = sorted([("White", setup.white), ("Black", setup.black)],
                   key=lambda side: min(_numbers(v, side[1])))
    row = "rows " if v.algebraic else ""
    return ", ".join(f"{colour} on {row}{_spans(_numbers(v, men))}" for colour, men in sides)


def _example(v: Variant) -> tuple[str, str, str]:
    """Three squares on one diagonal from White's third row: a move and a capture's squares."""
    rows = (v.size - 3, v.size - 4, v.size - 5)
    return tuple(square_name(v, square_at(v.size, r, 2 + i)) for i, r in enumerate(rows))


def _numbering(v: Variant) -> str:
    """How the squares are named, as a sentence."""
    if v.algebraic:
        a1 = parse_square(v, "a1")
        return (f"The squares are named like a chess board, a1 to {FILES[v.size - 1]}{v.size}, "
                f"with a1 a playing square at White's {_place(v, a1)}.")
    one, two, last = (parse_square(v, str(n)) for n in (1, 2, v.squares))
    across = "left to right" if _drawn(v, two)[1] > _drawn(v, one)[1] else "right to left"
    down = "top to bottom" if _drawn(v, last)[0] > _drawn(v, one)[0] else "bottom to top"
    return (f"The playing squares are numbered 1 to {v.squares} row by row, {across} and {down}: "
            f"square 1 is at the {_place(v, one)} as White sees the board.")


def _notation_cell(v: Variant) -> str:
    if v.algebraic:
        squares = f"a1-{FILES[v.size - 1]}{v.size}"
    else:
        squares = f"1-{v.squares} from the {_place(v, parse_square(v, '1'))}"
    return f"{squares}; captures with {v.capture_separator}"


def _names(v: Variant) -> list[str]:
    return list(dict.fromkeys((v.name, v.hub_name, *v.aliases)))


# -- the wording of each kind of rule ----------------------------------------------------------


class Wording(NamedTuple):
    """How the pages say one value of a rule (a Precedence, a CapturePromotion)."""

    cell: str  #: in the comparison table
    text: tuple[str, ...]  #: on the rule set's own page
    summary: str  #: in the list of rule sets ("" for nothing)


def wording(value: Precedence | CapturePromotion) -> Wording:
    """The words for a value of the records' capture rules, from prose.txt ("[Precedence FREE]")."""
    section = f"{type(value).__name__} {value.name}"
    words = _prose().get(section)
    if words is None or "cell" not in words:
        raise KeyError(f"prose.txt has no [{section}] with a cell")
    return Wording(words["cell"][0], words.get("text", ()), (words.get("summary") or ("",))[0])


TIMES = {2: ("twofold", "second"), 3: ("threefold", "third"), 4: ("fourfold", "fourth")}


def _draws(d: DrawRules) -> list[tuple[str, str]]:
    """The automatic draws: (as a table cell, as a sentence) each."""
    fold, nth = TIMES.get(d.repetitions, (f"{d.repetitions}-fold", f"{d.repetitions}th"))
    out = [(f"{fold} repetition",
            f"The same position with the same side to move for the {nth} time is a draw.")]
    if d.king_moves:
        out.append((f"{d.king_moves} moves each with only kings moving",
                    (f"{d.king_moves} moves by each side in which only kings moved and nothing "
                     "was captured is a draw.")))
    if d.endgame_three:
        out.append((f"a lone king against three pieces after {d.endgame_three} moves each",
                    ("One king alone against three pieces, at least one of them a king: a draw "
                     f"after {d.endgame_three} more moves each.")))
    if d.endgame_two:
        out.append((f"against two after {d.endgame_two}",
                    ("One king alone against at most two pieces, at least one a king: a draw "
                     f"after {d.endgame_two} more moves each.")))
    if d.no_progress:
        out.append((f"{d.no_progress} moves each without a capture or a crowning",
                    (f"{d.no_progress} moves by each side without a capture and without a "
                     "crowning is a draw.")))
    return out


# -- the comparison table ----------------------------------------------------------------------


class Row(NamedTuple):
    key: str
    label: str
    cell: Callable[[Variant], str]
    rule: bool = True  #: a rule (marked where two rule sets differ), not a name


ROWS = (
    Row("board", "Board", lambda v: f"{v.size}x{v.size}"),
    Row("men", "Men per side", lambda v: str(len(_setup(v).white))),
    Row("first", "Moves first", lambda v: _colour(v.white_starts)),
    Row("compulsory", "Capturing is compulsory",
        lambda v: "yes (house rule: no)" if house_rule_allowed(v) else "yes"),
    Row("backwards", "Men capture backwards", lambda v: _yes(v.men_capture_backwards)),
    Row("flying", "Flying kings", lambda v: _yes(v.flying_kings)),
    Row("men_take_kings", "Men may capture kings", lambda v: _yes(v.men_capture_kings)),
    Row("most_pieces", "Must capture the most pieces", lambda v: _yes(v.precedence.most_pieces)),
    Row("precedence", "Further capture precedence", lambda v: wording(v.precedence).cell),
    Row("promotion", "Man reaches the last row during a capture",
        lambda v: wording(v.capture_promotion).cell),
    Row("removed", "Captured pieces removed",
        lambda v: "at once" if v.removes_captured_at_once else "at the end of the move"),
    Row("corner", "Near corner that is a playing square",
        lambda v: "right" if v.turned_board else "left"),
    Row("notation", "Notation", _notation_cell),
    Row("draws", "Automatic draws", lambda v: "; ".join(c for c, _ in _draws(v.draws))),
    Row("gametype", "PDN GameType", lambda v: str(v.gametype), rule=False),
    Row("names", "Names damka accepts", lambda v: ", ".join(_names(v)), rule=False),
)


def _class(name: str, on) -> str:
    return f' class="{name}"' if on else ""


def comparison(current: Variant | None = None, other: Variant | None = None) -> str:
    """The table of every rule set, ``current``'s column highlighted and the rule rows where it
    differs from ``other`` marked."""
    def head(v: Variant) -> str:
        return (f'<th data-variant="{html.escape(v.name)}"{_class("current", v == current)} '
                f'title="{html.escape(v.title)}"><a href="{html.escape(v.name)}.html">'
                f"{html.escape(v.name.capitalize())}</a></th>")

    lines = ['<div class="table-wrap">', '<table class="compare">',
             "<thead><tr><th>Rule</th>" + "".join(head(v) for v in VARIANTS) + "</tr></thead>",
             "<tbody>"]
    for row in ROWS:
        differs = row.rule and current and other and row.cell(current) != row.cell(other)
        cells = "".join(f'<td{_class("current", v == current)}>{html.escape(row.cell(v))}</td>'
                        for v in VARIANTS)
        lines.append(f'<tr data-rule="{row.key}"{_class("differs", differs)}>'
                     f"<th>{html.escape(row.label)}</th>{cells}</tr>")
    lines += ["</tbody>", "</table>", "</div>"]
    return "\n".join(lines)


# -- the prose -----------------------------------------------------------------------------------


@cache
def _prose() -> dict[str, dict[str, tuple[str, ...]]]:
    """prose.txt: page -> key -> its lines."""
    pages: dict[str, dict[str, list[str]]] = {}
    current = None
    path = RULES_DIR / "prose.txt"
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            current = pages.setdefault(line[1:-1].strip(), {})
            continue
        key, colon, text = line.partition(":")
        if current is None or not colon:
            raise ValueError(f"{path}:{number}: expected [page] or key: text")
        current.setdefault(key.strip(), []).append(text.strip())
    return {page: {k: tuple(v) for k, v in keys.items()} for page, keys in pages.items()}


def _words(page: str, key: str) -> tuple[str, ...]:
    return _prose().get(page, {}).get(key, ())


# -- the pages -------------------------------------------------------------------------------------


def _p(*sentences: str) -> str:
    return "<p>" + " ".join(inline(s) for s in sentences if s) + "</p>"


def _ul(items) -> str:
    return "<ul>\n" + "\n".join(f"<li>{inline(i)}</li>" for i in items) + "\n</ul>"


def _h3(title: str, body: str) -> str:
    return f"<h3>{html.escape(title)}</h3>\n{body}"


def _house_link(v: Variant) -> str:
    if not house_rule_allowed(v):
        return ""
    return (f' Tick <b>No forced capture</b> to play it with the '
            f'<a href="{HOUSE_RULE_PAGE}.html">house rule</a>.')


def _play(v: Variant) -> str:
    first, second = _colour(v.white_starts), _colour(not v.white_starts)
    levels = f"{_count(len(LEVEL_NAMES))} levels ({', '.join(LEVEL_NAMES)})"
    if v == get_variant(DEFAULT_VARIANT):
        opening = (f"{short_title(v)} is the default: open the game and you play {first} at the "
                   f"bottom against the computer at once, and you begin. The computer plays "
                   f"{second} at {levels}, {DEFAULT_LEVEL} at first, or play a friend on the same "
                   "screen; the **Rules** menu at the top switches to any other rule set.")
    else:
        opening = (f"Choose **{menu_label(v)}** in the **Rules** menu at the top. You play {first} "
                   f"at the bottom and begin; the computer plays {second} at {levels}, or play a "
                   "friend on the same screen.")
    turned = (" The board is turned the way this rule set is played, with a playing square in "
              "each player's near-right corner." if v.turned_board else "")
    return f"<p>{inline(opening + turned)}{_house_link(v)}</p>"


def _board(v: Variant) -> str:
    setup = _setup(v)
    rows = len({_drawn(v, s)[0] for s in setup.white})
    empty = v.size - 2 * rows
    turned = ("The board is turned so that each player's near-right corner is a playing square."
              if v.turned_board else "")
    return _p(f"{v.size} rows and {v.size} columns; only the {v.squares} dark squares are used.",
              turned,
              f"Each side has {len(setup.white)} men on the playing squares of the {_count(rows)} "
              f"rows nearest to it: {_sides(v, setup)}, with {_count(empty)} empty rows between.",
              f"**{_colour(v.white_starts)} moves first.**")


def _moves(v: Variant) -> str:
    man = ("A man moves one square diagonally forward to an empty square"
           + ("." if v.men_capture_backwards else "; men never move or capture backwards."))
    king = ("Kings fly: a king moves any number of empty squares along a diagonal, forwards or "
            "backwards." if v.flying_kings else
            "A king moves one square diagonally in any of the four directions; kings do not fly.")
    return _p(man, king)


def _captures(v: Variant) -> str:
    jump = "jumping an adjacent enemy piece to the empty square directly behind it"
    items = ["Capturing is compulsory: if one of your pieces can capture, you must capture."]
    items.append(f"Men capture forwards and backwards, {jump}." if v.men_capture_backwards else
                 f"Men capture forwards only, {jump}.")
    items.append("A flying king captures an enemy piece at any distance along a diagonal if the "
                 "squares between are empty, and lands on any empty square beyond it; if it can "
                 "capture on only from some of those squares, it must land on one of them."
                 if v.flying_kings else
                 f"A king captures forwards and backwards, {jump}.")
    if not v.men_capture_kings:
        items.append("**A man may not capture a king.**")
    items.append("If the piece can capture again from where it lands, it must go on in the same "
                 "move, and it may change direction between jumps: a started capture must be "
                 "finished.")
    items += wording(v.precedence).text
    items.append("Each jumped piece is removed at once, and no piece can be jumped twice."
                 if v.removes_captured_at_once else
                 "Captured pieces stay on the board until the whole move is over: a piece cannot "
                 "be jumped twice, and pieces waiting to be removed still block the way (the "
                 "Turkish strike).")
    return _ul(items)


def _winning(v: Variant) -> str:
    items = ["You win when your opponent has no pieces left or no legal move."]
    items += [sentence for _, sentence in _draws(v.draws)]
    alike = [w for w in VARIANTS if w.size == v.size]
    if v.draws.no_progress and all(w.draws == v.draws for w in alike):
        items[-1] += (" Tournament rule books differ in detail; this site uses this one counter "
                      f"for every {v.size}x{v.size} rule set.")
    return _ul(items)


def _notation(v: Variant) -> str:
    origin, step, landing = _example(v)
    capture = f"{origin}{v.capture_separator}{landing}"
    names = ", ".join(_names(v))
    return _p(_numbering(v),
              f"A move is written {origin}-{step}, a capture {capture}.",
              f"PDN game type {v.gametype}. Names damka accepts for it: {names}.")


def _rules(v: Variant) -> str:
    return "\n".join([
        _h3("Board and setup", _board(v)),
        _h3("Moves", _moves(v)),
        _h3("Captures", _captures(v)),
        _h3("Promotion", _p(*wording(v.capture_promotion).text)),
        _h3("Winning and drawing", _winning(v)),
        _h3("Notation and names", _notation(v)),
    ])


def _summary(v: Variant) -> str:
    """"8x8, 12 men each, men only forward, ...": the rule set in one line."""
    parts = [f"{v.size}x{v.size}", f"{len(_setup(v).white)} men each",
             "men capture backwards" if v.men_capture_backwards else "men only forward",
             "flying kings" if v.flying_kings else "kings move one square"]
    if not v.men_capture_kings:
        parts.append("men may not capture kings")
    wordings = (wording(v.precedence), wording(v.capture_promotion))
    return ", ".join(parts + [w.summary for w in wordings if w.summary]) + "."


def _others() -> str:
    items = []
    for v in VARIANTS:
        link = f'<a href="{html.escape(v.name)}.html">{html.escape(short_title(v))}</a>'
        items.append(f"<li>{link} – {html.escape(_summary(v))}</li>")
    sizes = _join(sorted({f"{v.size}x{v.size}" for v in VARIANTS if house_rule_allowed(v)}))
    items.append(f'<li><a href="{HOUSE_RULE_PAGE}.html">{html.escape(_house_title())}</a> – '
                 f"house rule for any {sizes} rule set: you may skip a capture.</li>")
    return "<ul>\n" + "\n".join(items) + "\n</ul>"


def _house_title() -> str:
    return (_words(HOUSE_RULE_PAGE, "title") or ("No forced capture (house rule)",))[0]


def _variant_page(v: Variant) -> dict[str, str]:
    other_name = (_words(v.name, "compare") or (None,))[0]
    other = get_variant(other_name) if other_name else None
    intro = ""
    if other is not None:
        intro = _p(f"The {short_title(v)} column is highlighted; the rows where its rules differ "
                   f"from {short_title(other)} are marked.")
    return {
        "page": v.name,
        "title": html.escape(v.title),
        "lead": inline(" ".join(_words(v.name, "lead")) or f"{short_title(v)}: {_summary(v)}"),
        "play": _play(v),
        "rules": _rules(v),
        "compare": intro + "\n" + comparison(v, other),
        "tips": _ul(_words(v.name, "tip")),
    }


def _house_page() -> dict[str, str]:
    page = HOUSE_RULE_PAGE
    allowed = [v for v in VARIANTS if house_rule_allowed(v)]
    most = [short_title(v) for v in allowed if v.precedence.most_pieces]
    never = [menu_label(v) for v in VARIANTS if not house_rule_allowed(v)]
    rules = list(_words(page, "rule"))
    if most:
        rules.insert(2, "Among captures, the rule set's own precedence still holds (for example "
                        f"the most pieces in {_join(most)}).")
    if never:
        rules.append(f"{_join(never)} {'is' if len(never) == 1 else 'are'} always played with "
                     "compulsory capture.")
    return {
        "page": page,
        "title": html.escape(_house_title()),
        "lead": inline(" ".join(_words(page, "lead"))),
        "play": _p(*_words(page, "play")),
        "rules": _ul(rules),
        "compare": _p(*_words(page, "differences")) + "\n" + comparison(),
        "tips": _ul(_words(page, "tip")),
    }


def page_names() -> list[str]:
    """Every rules page: one per rule set, then the house rule's."""
    return [v.name for v in VARIANTS] + [HOUSE_RULE_PAGE]


def canonical_page(name: str) -> str | None:
    """The page for a rule-set name or alias ("checkers" -> "english"); None if there is none."""
    if name == HOUSE_RULE_PAGE:
        return name
    try:
        variant = get_variant(name)
    except UnknownVariantError:
        return None
    return variant.name if variant.forced_capture else HOUSE_RULE_PAGE


@cache
def render(page: str) -> str:
    """The HTML of one rules page (a name from page_names())."""
    fields = _house_page() if page == HOUSE_RULE_PAGE else _variant_page(get_variant(page))
    fields["others"] = _others()
    template = Template((RULES_DIR / "page.html").read_text(encoding="utf-8"))
    return template.substitute(fields)
