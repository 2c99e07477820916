"""PDN games: reading and writing, round-tripping tags, comments and variations.

Reading is lenient where files differ (move numbers ``1.``/``1...`` or none, annotation marks,
NAGs, every move and result form, ``;`` comments) and strict where a move would be guessed: an
illegal or ambiguous move stops the reading with a PdnError that names the game (its number
and tags) and the line. ``read_games`` yields every game before the bad one first.

The rule set of a game is its ``GameType`` tag when present, else the ``variant`` argument.
Main-line moves are replayed (so they are checked) and written back in our PDN: the short form,
the full path only where the short form is ambiguous. Variation moves are kept as written.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterator, Union

from .board import Board
from .errors import DamkaError
from .game import Comment, Game, Line, LineMove, Notes, Termination, parse_result
from .variants import UnknownVariantError, Variant, as_variant, get_variant

__all__ = ["PdnError", "read_games", "read_game", "write_game", "append_game",
           "check_appendable"]

Source = Union[str, "os.PathLike[str]", IO[str]]

#: the tags written first, in this order (PDN's seven-tag roster plus the rule set and start)
ROSTER = ("Event", "Site", "Date", "Round", "White", "Black", "Result", "GameType", "FEN")
#: tags the writer always derives from the game itself
_DERIVED = frozenset({"Result", "GameType", "FEN"})
#: the tag that records the "no forced capture" house rule (``[ForcedCapture "no"]``), which
#: PDN's GameType has no number for
HOUSE_RULE_TAG = "ForcedCapture"
#: what the house rule's tag may say, and whether captures are then forced
_SAID = {"no": False, "false": False, "0": False, "yes": True, "true": True, "1": True}
WIDTH = 79


class PdnError(DamkaError):
    """A PDN game that cannot be read: ``game`` (1-based number), its ``tags`` and ``line``."""

    def __init__(self, message: str, game: int | None = None, tags: "dict | None" = None,
                 line: int | None = None):
        self.reason = message
        self.game = game
        self.tags = dict(tags or {})
        self.line = line
        where = []
        if game is not None:
            label = ", ".join(f'{k} "{v}"' for k, v in self.tags.items() if k in ROSTER[:6])
            where.append(f"game {game}" + (f" ({label})" if label else ""))
        if line is not None:
            where.append(f"line {line}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)


# -- tokens ---------------------------------------------------------------------------------------

#: every token but tags and comments, tried at one position; no alternative can take long to
#: fail (each is greedy over classes that do not overlap what follows), so reading is linear
_TOKEN = re.compile(
    r"""
    (?P<space>\s+)
  | (?P<line_comment>;(?P<line_comment_text>[^\n]*))
  | (?P<open>\()
  | (?P<close>\))
  | (?P<nag>\$\d+)
  | (?P<result>(?:2-0|0-2|1-1|1-0|0-1|1/2-1/2|½-½|\*)(?=\s|$|[\[\)(]))
  | (?P<number>\d+\.+)
  | (?P<dots>\.{2,}|…)
  | (?P<move>[a-jA-J]?\d+(?:[-xX:×][a-jA-J]?\d+)+)(?P<suffix>[!?]*)
  | (?P<mark>[!?]+)
  | (?P<escape>(?<![^\n])%[^\n]*)
  | (?P<bad>[^\s\[\](){}]+|.)
    """,
    re.VERBOSE,
)

#: what the writer may write as a tag name and as an annotation (what the reader reads back)
_TAG_NAME = re.compile(r"[A-Za-z0-9_]+")
_NAG = re.compile(r"\$\d+|[!?]+")

#: a tag is scanned in steps that each always match and never back up: ``[`` and its name,
#: then a quoted value (escapes allowed) or a bare one, then ``]``. One regular expression for
#: the whole tag backtracked: ``[A`` and 20,000 spaces took minutes.
_TAG_HEAD = re.compile(r"\[\s*(?:(?P<name>[A-Za-z0-9_]+)\s*)?")
_TAG_QUOTED = re.compile(r'"(?P<value>[^"\\]*(?:\\.[^"\\]*)*)(?P<quote>"?)\s*(?P<end>\]?)')
_TAG_BARE = re.compile(r'(?P<value>[^\]"]*)(?P<end>\]?)')


@dataclass
class _Token:
    kind: str
    text: str
    line: int
    value: str = ""
    extra: str = ""


def _tokens(text: str) -> Iterator[_Token]:
    pos, line = 0, 1
    tok: _Token | None
    while pos < len(text):
        c = text[pos]
        if c == "[":
            tok, end = _tag(text, pos, line)
        elif c == "{":
            tok, end = _brace_comment(text, pos, line)
        else:
            m = _TOKEN.match(text, pos)
            assert m is not None  # the last alternative matches any character
            kind = _kind(m)
            tok = None if kind in ("space", "escape") else _token(kind, m, line)
            end = m.end()
        if tok is not None:
            yield tok
        line += text.count("\n", pos, end)
        pos = end


def _tag(text: str, pos: int, line: int) -> tuple[_Token, int]:
    """The tag at ``text[pos]`` (a ``[``) and where it ends; a malformed one is a ``bad_tag``
    token holding the reason, running to where the scan stopped, so that no text is scanned
    twice."""
    head = _TAG_HEAD.match(text, pos)
    assert head is not None  # (every part of the pattern is optional: it always matches)
    name, end = head.group("name"), head.end()
    if name is None:
        return _Token("bad_tag", text[pos:end], line, "'[' not followed by a tag name"), end
    if text.startswith('"', end):
        m = _TAG_QUOTED.match(text, end)
        assert m is not None  # (always matches, as above)
        value, end = re.sub(r"\\(.)", r"\1", m.group("value")), m.end()
        missing = ("its value is not closed by '\"'" if not m.group("quote") else
                   "not closed by ']' after its value" if not m.group("end") else "")
    else:
        m = _TAG_BARE.match(text, end)
        assert m is not None  # (always matches, as above)
        value, end = m.group("value").strip(), m.end()
        missing = ("" if m.group("end") else "not closed by ']'" if end == len(text) else
                   "not closed by ']' before a '\"'")
    if missing:
        reason = f"tag {_excerpt(text[pos:end])} {missing}"
        return _Token("bad_tag", text[pos:end], line, reason), end
    return _Token("tag", text[pos:end], line, name, value), end


def _brace_comment(text: str, pos: int, line: int) -> tuple[_Token, int]:
    """The ``{...}`` comment at ``text[pos]``; one not closed takes the rest of the text (it
    stops the reading anyway), so that a run of ``{`` is not searched to the end each."""
    close = text.find("}", pos + 1)
    if close < 0:
        return _Token("open_comment", text[pos:], line, "{"), len(text)
    return _Token("comment", text[pos:close + 1], line, text[pos + 1:close]), close + 1


def _excerpt(text: str, width: int = 24) -> str:
    """``text`` quoted for a message, its spaces folded and cut at ``width``: a bad token may
    be a whole file."""
    short = " ".join(text.split())
    return repr(short if len(short) <= width else short[:width] + "...")


_KINDS = ("space", "line_comment", "open", "close", "nag", "result", "number", "dots", "move",
          "mark", "escape", "bad")


def _kind(m: "re.Match[str]") -> str:
    for kind in _KINDS:
        if m.group(kind) is not None:
            return kind
    return "bad"  # pragma: no cover


def _token(kind: str, m: "re.Match[str]", line: int) -> _Token:
    if kind == "line_comment":
        return _Token("comment", m.group(0), line, m.group("line_comment_text").rstrip("\r"))
    if kind == "move":
        return _Token(kind, m.group(0), line, m.group("move"), m.group("suffix"))
    return _Token(kind, m.group(0), line, m.group(0))


# -- reading ------------------------------------------------------------------------------------


@dataclass
class _RawGame:
    number: int
    line: int
    tags: dict = field(default_factory=dict)
    tokens: list = field(default_factory=list)
    result: _Token | None = None


def _raw_games(text: str) -> Iterator[_RawGame]:
    """Split the token stream into games: tags, then movetext up to a result or the next tag."""
    raw: _RawGame | None = None
    count = 0
    depth = 0
    for tok in _tokens(text):
        if tok.kind == "tag" and raw is not None and raw.tokens and depth == 0:
            yield raw  # a game without a result token ends where the next tags begin
            raw = None
        if raw is None:
            count += 1
            raw = _RawGame(count, tok.line)
            depth = 0
        if tok.kind == "tag" and not raw.tokens:
            raw.tags[tok.value] = tok.extra
            continue
        if tok.kind == "result" and depth == 0:
            raw.result = tok
            yield raw
            raw = None
            continue
        depth += {"open": 1, "close": -1}.get(tok.kind, 0)
        raw.tokens.append(tok)
    if raw is not None:
        yield raw


def _source_text(source: Source) -> str:
    if hasattr(source, "read"):
        text = source.read()
    elif isinstance(source, os.PathLike) or (
        isinstance(source, str) and "\n" not in source and len(source) < 4096
        and not source.lstrip().startswith(("[", "{")) and os.path.isfile(source)
    ):
        data = Path(source).read_bytes()
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            text = data.decode("latin-1")  # older PDN files are ISO 8859-1
    elif (isinstance(source, str) and "\n" not in source
          and source.strip().lower().endswith((".pdn", ".txt"))):
        raise FileNotFoundError(source)
    else:
        text = str(source)
    return text.lstrip("\ufeff")


def read_games(source: Source, variant: "str | Variant" = "international") -> Iterator[Game]:
    """The games of a PDN file (a path, a file object or the PDN text), in order.

    ``variant`` is the rule set of games without a ``GameType`` tag (a Variant, or a name for
    a caller that has no record). A game that cannot be read raises PdnError after the games
    before it were yielded. A ``GameType`` tag is a name of the file's own, looked up where it
    is read.
    """
    default = as_variant(variant)
    for raw in _raw_games(_source_text(source)):
        yield _build(raw, default)


def read_game(source: Source, variant: "str | Variant" = "international") -> Game:
    """The first game of a PDN source; PdnError if there is none (``variant`` as in
    read_games)."""
    for game in read_games(source, variant):
        return game
    raise PdnError("no game found")


class _Fail(Exception):
    def __init__(self, message: str, line: int | None):
        self.message, self.line = message, line


def _build(raw: _RawGame, default: Variant) -> Game:
    try:
        game = _new_game(raw, default)
        _read_main_line(game, raw.tokens)
        _read_result(game, raw)
    except _Fail as fail:
        raise PdnError(fail.message, raw.number, raw.tags, fail.line) from None
    return game


def _new_game(raw: _RawGame, default: Variant) -> Game:
    variant = default
    gametype = raw.tags.get("GameType", "").strip()
    if gametype:
        number = gametype.split(",")[0].strip()
        try:
            variant = get_variant(number)
        except UnknownVariantError:
            raise _Fail(f"unsupported GameType {gametype!r}", raw.line) from None
        if variant.gametype == default.gametype:
            variant = default  # keeps a house rule that the argument asked for
    forced = raw.tags.get(HOUSE_RULE_TAG, "").strip().lower()
    if variant.size == 8 and forced in _SAID:  # the game's own word wins over the default
        variant = variant.with_forced_capture(_SAID[forced])
    tags = {k: v for k, v in raw.tags.items() if k != HOUSE_RULE_TAG}  # (the variant says it)
    try:
        return Game(variant, raw.tags.get("FEN") or None, tags)
    except DamkaError as exc:
        raise _Fail(str(exc), raw.line) from None


def _read_main_line(game: Game, tokens: list[_Token]) -> None:
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        notes = game.notes[-1] if game.notes else None
        if tok.kind == "move":
            try:
                game.push(tok.value)
            except DamkaError as exc:
                raise _Fail(f"move {_move_number(game)} {exc}", tok.line) from None
            if tok.extra:
                game.notes[-1].nags.append(tok.extra)
        elif tok.kind in ("nag", "mark"):
            if notes is None:
                raise _Fail(f"{tok.text!r} before the first move", tok.line)
            notes.nags.append(tok.value)
        elif tok.kind == "comment":
            (notes.after if notes else game.intro).append(Comment(tok.value))
        elif tok.kind == "open":
            line, i = _read_line(tokens, i + 1)
            (notes.after if notes else game.intro).append(line)
            continue
        elif tok.kind not in ("number", "dots"):
            raise _Fail(_unexpected(tok), tok.line)
        i += 1


def _move_number(game: Game) -> str:
    """``12.`` or ``12...``: the number of the move about to be played."""
    k = game.ply + _numbering(game.variant, game.start.white_to_move)
    return f"{k // 2 + 1}{'.' if k % 2 == 0 else '...'}"


def _read_line(tokens: list[_Token], i: int) -> tuple[Line, int]:
    """A variation whose ``(`` came just before ``tokens[i]``; returns it and the index after
    its ``)``."""
    opened = tokens[i - 1].line
    line = Line()
    while i < len(tokens):
        tok = tokens[i]
        last = line.moves[-1].notes if line.moves else None
        if tok.kind == "close":
            return line, i + 1
        if tok.kind == "move":
            line.moves.append(LineMove(tok.value, Notes(nags=[tok.extra] if tok.extra else [])))
        elif tok.kind in ("nag", "mark"):
            if last is None:
                raise _Fail(f"{tok.text!r} before the first move of a variation", tok.line)
            last.nags.append(tok.value)
        elif tok.kind == "comment":
            (last.after if last else line.before).append(Comment(tok.value))
        elif tok.kind == "open":
            if last is None:
                raise _Fail("a variation before the first move of a variation", tok.line)
            inner, i = _read_line(tokens, i + 1)
            last.after.append(inner)
            continue
        elif tok.kind == "result":
            line.result = tok.value
        elif tok.kind not in ("number", "dots"):
            raise _Fail(_unexpected(tok), tok.line)
        i += 1
    raise _Fail("a variation is not closed", opened)


def _unexpected(tok: _Token) -> str:
    if tok.kind == "open_comment":
        return "a comment '{' is not closed"
    if tok.kind == "close":
        return "')' without a variation to close"
    if tok.kind == "bad_tag":
        return tok.value
    if tok.kind == "tag":
        return f"tag {_excerpt(tok.text)} in the middle of the moves"
    return f"unexpected {_excerpt(tok.text)}"


def _read_result(game: Game, raw: _RawGame) -> None:
    """The result token (or else the Result tag) when it says more than the rules do."""
    text = raw.result.value if raw.result is not None else raw.tags.get("Result", "*").strip()
    line = raw.result.line if raw.result is not None else raw.line
    if text in ("*", "", "?"):
        return
    try:
        winner = parse_result(text)
    except ValueError as exc:
        raise _Fail(str(exc), line) from None
    rules = game.rules_outcome()
    tagged = Termination.parse(raw.tags.get("Termination", ""))
    if rules is not None and rules.winner == winner and tagged in (None, rules.termination):
        return
    game.end(winner, tagged)


# -- writing ---------------------------------------------------------------------------------


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def _tag_lines(game: Game) -> list[str]:
    tags: dict[str, str] = {}
    for name in ROSTER:
        if name in game.tags and name not in _DERIVED:
            tags[name] = game.tags[name]
    tags["Result"] = game.result
    gametype = game.tags.get("GameType", "").strip()
    try:  # the tag as read (a name of the file's own) is kept when it names the game's rules
        same = bool(gametype) and (get_variant(gametype.split(",")[0].strip()).gametype
                                   == game.variant.gametype)
    except UnknownVariantError:
        same = False
    tags["GameType"] = gametype if same else game.variant.pdn_gametype
    if "FEN" in game.tags or game.start != Board(game.variant).position:
        tags["FEN"] = game.start_fen
    if not game.variant.forced_capture:  # GameType cannot say it: without it, unreadable
        tags[HOUSE_RULE_TAG] = "no"
    for name, value in game.tags.items():
        if name not in tags and name not in ("Termination", HOUSE_RULE_TAG):
            tags[name] = value
    termination, written = game.termination, game.tags.get("Termination")
    if written is not None and Termination.parse(written) == termination:
        # as read: the file's own words for the game's end, or for one the game cannot name
        tags["Termination"] = written
    elif termination is not None and (not termination.by_rules or written is not None):
        tags["Termination"] = termination.value
    for name in tags:
        if not isinstance(name, str) or not _TAG_NAME.fullmatch(name):
            # written, it would make the file unreadable from this game on
            raise DamkaError(f"the tag name {name!r} cannot be written in PDN (letters, digits "
                             "and _ only)")
    return [f'[{name} "{_escape(str(value))}"]' for name, value in tags.items()]


def _comment(text: str) -> str:
    return "{" + text.replace("}", ")") + "}"


def _nag_tokens(move_text: str, nags: list[str]) -> list[str]:
    for nag in nags:
        if not (isinstance(nag, str) and _NAG.fullmatch(nag)):
            raise DamkaError(f"the annotation {nag!r} after {move_text} cannot be written in "
                             "PDN ($ and a number, or ! and ? marks)")
    marks = "".join(n for n in nags if not n.startswith("$"))
    return [move_text + marks] + [n for n in nags if n.startswith("$")]


def _numbering(variant: Variant, start_white: bool) -> int:
    """0 when the start position's side to move opens a move number, else 1."""
    return 0 if start_white == variant.white_starts else 1


def _number(k: int, forced: bool) -> list[str]:
    """The move number before half-move ``k`` (counted so that even ``k`` opens a number)."""
    if k % 2 == 0:
        return [f"{k // 2 + 1}."]
    return [f"{k // 2 + 1}..."] if forced else []


def _numbered(number: list[str], tokens: list[str]) -> list[str]:
    """The move number joined to its move, so that wrapping never parts them."""
    if number:
        tokens[0] = f"{number[0]} {tokens[0]}"
    return tokens


def _after_tokens(items: list, k: int, renumber: bool = True) -> list[str]:
    """Comments and variations after half-move ``k``; a variation replaces that move."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Comment):
            out.append(_comment(item.text))
        else:
            out.extend(_line_tokens(item, k, renumber))
    return out


def _line_tokens(line: Line, k: int, renumber: bool = True) -> list[str]:
    out = [_comment(c.text) for c in line.before]
    forced = True
    for j, move in enumerate(line.moves):
        out += _numbered(_number(k + j, forced), _nag_tokens(move.text, move.notes.nags))
        out += _after_tokens(move.notes.after, k + j, renumber)
        forced = renumber and bool(move.notes.after)
    if line.result:
        out.append(line.result)
    if not out:
        return ["()"]
    out[0] = "(" + out[0]
    out[-1] += ")"
    return out


def _movetext(game: Game, comments: bool = True, renumber: bool = True) -> list[str]:
    offset = _numbering(game.variant, game.start.white_to_move)
    out = _after_tokens(game.intro, offset, renumber) if comments else []
    board = Board(game.variant, game.start)
    forced = True
    for i, (move, notes) in enumerate(zip(game.moves, game.notes)):
        k = i + offset
        out += _numbered(_number(k, forced), _nag_tokens(board.pdn(move), notes.nags))
        after = notes.after if comments else []
        out += _after_tokens(after, k, renumber)
        forced = renumber and bool(after)
        board.push(move)
    out.append(game.result)
    return out


def _wrap(tokens: list[str], width: int) -> list[str]:
    lines: list[str] = []
    current = ""
    for tok in tokens:
        if not current:
            current = tok
        elif len(current) + 1 + len(tok) > width:
            lines.append(current)
            current = tok
        else:
            current += " " + tok
    if current:
        lines.append(current)
    return lines


def write_game(game: Game, width: int = WIDTH, comments: bool = True,
               renumber: bool = True) -> str:
    """The game as PDN text: tags, a blank line, the moves wrapped at ``width``, a newline.

    ``comments=False`` leaves out the comments and variations (annotation marks stay);
    ``renumber=False`` writes no ``12...`` before a second player's move that follows a comment
    or a variation. Either makes a file that pydraughts (0.6.7) reads: its reader drops the
    comments and then loses its way on a move number written twice.
    """
    lines = _tag_lines(game) + [""] + _wrap(_movetext(game, comments, renumber), width)
    return "\n".join(lines) + "\n"


def check_appendable(path: "str | os.PathLike[str]") -> None:
    """A ValueError saying why, unless games can be appended to ``path``: checked before the
    first game of a match or server, not found out after it. A file made for the check is
    removed again, so that a run that fails to start leaves nothing behind."""
    existed = os.path.lexists(path)
    try:
        with open(path, "ab"):
            pass
        if not existed:
            os.remove(path)
    except OSError as exc:
        raise ValueError(f"cannot write the PDN file {path}: {exc.strerror or exc}") from None


def append_game(path: "str | os.PathLike[str]", game: "Game | str") -> None:
    """Append a game (or its PDN text, as write_game made it elsewhere) to a PDN file in one
    write, flushed to disk before returning.

    A match runner calls it as each game ends: a process that dies afterwards loses nothing.
    A write that fails (a full disk) is undone, the file cut back to its size before, and the
    error raised: the file holds only whole games, which ``--resume`` reads back.
    """
    text = (game if isinstance(game, str) else write_game(game)) + "\n"
    # unbuffered: no bytes left in a buffer to be written by close() after the cut
    with open(path, "ab+", buffering=0) as f:
        size = f.seek(0, os.SEEK_END)
        if size > 0:
            f.seek(-1, os.SEEK_END)
            if f.read(1) != b"\n":  # a file not ending in a newline: start on a new line
                text = "\n" + text
        data = memoryview(text.encode("utf-8"))
        try:
            while data:  # a full disk first takes what fits, then raises ENOSPC
                data = data[os.write(f.fileno(), data):]
            os.fsync(f.fileno())
        except BaseException:
            _cut_back(f.fileno(), size)
            raise


def _cut_back(fd: int, size: int) -> None:
    """Truncate a file to ``size``: best effort, as the write's own error is the one to
    report."""
    try:
        os.ftruncate(fd, size)
        os.fsync(fd)
    except OSError:
        pass
