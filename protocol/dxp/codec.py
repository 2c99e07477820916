"""DXP (DamExchange) messages as value types, and the NUL framing of the byte stream.

No I/O and no engine here: text <-> messages and bytes <-> message texts only, so that every
layout can be tested byte for byte. Fields are fixed-width and zero-padded exactly as the
DamExchange pages lay them out (docs/protocols.md section 2.2). Squares are the numbers 1..50
of the 10x10 board; converting them to engine squares is ``convert``'s business.

Decoding is strict about lengths and field values (a wrong message raises DxpError saying
which field is wrong) but tolerant where real programs differ: trailing spaces of names are
dropped and an empty CHAT is accepted. The GAMEREQ thinking time is whole minutes, three
digits, both ways: a fraction ("0.5", which some initiators write) is refused, never guessed
at (GameRequestError, which the follower answers with a GAMEACC refusal).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum
from typing import Union

from protocol.dxp.defaults import DEFAULT_PORT

__all__ = [
    "MAX_LENGTH",
    "NAME_WIDTH",
    "DEFAULT_PORT",
    "DxpError",
    "UnsupportedVersionError",
    "GameRequestError",
    "AcceptCode",
    "EndReason",
    "BackCode",
    "DxpPosition",
    "GameRequest",
    "GameAccept",
    "DxpMove",
    "GameEnd",
    "Chat",
    "BackRequest",
    "BackAccept",
    "Message",
    "decode",
    "encode",
    "Reassembler",
]

#: the longest message, NUL not counted
MAX_LENGTH = 127
NAME_WIDTH = 32
PROTOCOL_VERSION = 1
SQUARES = 50
#: the most pieces one capture can take on 10x10 (the MOVE field allows 00-20)
MAX_CAPTURED = 20
_PIECES = frozenset("ewzWZ")


class DxpError(ValueError):
    """A message that breaks the DXP layout; ``text`` is the offending message."""

    def __init__(self, text: str, reason: str):
        super().__init__(f"{reason}: {text[:40]!r}{'...' if len(text) > 40 else ''}")
        self.text = text
        self.reason = reason


class UnsupportedVersionError(DxpError):
    """A GAMEREQ of a protocol version we do not speak (answered with GAMEACC code 1)."""

    def __init__(self, text: str, version: int):
        super().__init__(text, f"protocol version {version:02d} is not supported")
        self.version = version


class GameRequestError(DxpError):
    """A GAMEREQ of our protocol version that breaks the layout (a thinking time that is not
    three digits, say): answered with a GAMEACC refusal rather than left unanswered."""


class AcceptCode(IntEnum):
    """The GAMEACC answer."""

    ACCEPTED = 0
    VERSION_NOT_SUPPORTED = 1
    REFUSED_THIS_GAME = 2  #: but willing to play another
    REFUSED_ALL = 3


class EndReason(IntEnum):
    """Why a GAMEEND is sent, from the sender's point of view (0 is always allowed)."""

    UNKNOWN = 0
    I_LOSE = 1
    DRAW = 2
    I_WIN = 3


class BackCode(IntEnum):
    """The BACKACC answer."""

    ACCEPTED = 0
    NOT_SUPPORTED = 1
    REFUSED = 2


# -- field helpers ----------------------------------------------------------------------


def _check_ascii(text: str) -> None:
    for ch in text:
        if not 1 <= ord(ch) <= 127:
            raise DxpError(text, f"character {ch!r} is not ASCII 1..127")


def _number(text: str, start: int, width: int, name: str, low: int = 0, high: int | None = None) -> int:
    field = text[start:start + width]
    if len(field) != width or not field.isdigit() or not field.isascii():
        raise DxpError(text, f"{name} must be {width} digits, not {field!r}")
    value = int(field)
    if value < low or (high is not None and value > high):
        raise DxpError(text, f"{name} {value} is outside {low}..{high}")
    return value


def _digits(value: int, width: int, name: str, low: int = 0, high: int | None = None) -> str:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{name} must be an integer, not {value!r}")
    top = 10 ** width - 1 if high is None else high
    if not low <= value <= top:
        raise ValueError(f"{name} {value} is outside {low}..{top}")
    return f"{value:0{width}d}"


def _colour(text: str, index: int, name: str) -> bool:
    """True for White (W), False for Black (Z)."""
    ch = text[index:index + 1]
    if ch not in ("W", "Z"):
        raise DxpError(text, f"{name} must be W or Z, not {ch!r}")
    return ch == "W"


def _colour_char(white: bool) -> str:
    return "W" if white else "Z"


def _name_field(name: str) -> str:
    if len(name) > NAME_WIDTH:
        raise ValueError(f"a DXP name has at most {NAME_WIDTH} characters: {name!r}")
    if name.startswith(" "):
        raise ValueError(f"a DXP name must not start with a space: {name!r}")
    _check_ascii(name)
    return name.ljust(NAME_WIDTH)


def _square(text: str, start: int, name: str) -> int:
    return _number(text, start, 2, name, 1, SQUARES)


# -- the messages -----------------------------------------------------------------------


@dataclass(frozen=True)
class DxpPosition:
    """A GAMEREQ start position: the side to move and squares 1..50 as ``e w z W Z``."""

    white_to_move: bool
    squares: str

    def __post_init__(self) -> None:
        if len(self.squares) != SQUARES or not set(self.squares) <= _PIECES:
            raise ValueError(f"a DXP position is {SQUARES} characters of e w z W Z: {self.squares!r}")


#: the start position of international draughts, written as DXP writes it
START_SQUARES = "z" * 20 + "e" * 10 + "w" * 20


def _minutes_field(minutes: int) -> str:
    """The thinking time field: whole minutes 000-999 (no fractions: docs/protocols.md 2.2)."""
    if isinstance(minutes, float) and minutes.is_integer():
        minutes = int(minutes)
    if isinstance(minutes, float):
        raise ValueError(f"thinking time is whole minutes in DXP, not {minutes}")
    return _digits(minutes, 3, "thinking time")


@dataclass(frozen=True)
class GameRequest:
    """GAMEREQ ``R``: the initiator asks for a game. ``follower_white`` is the colour the
    *receiver* plays; ``minutes`` and ``moves`` are for the whole game (0 moves: no limit);
    ``position`` None is form A (the start position, White to move)."""

    name: str
    follower_white: bool
    minutes: int = 0
    moves: int = 0
    position: DxpPosition | None = None

    HEADER = "R"

    def to_text(self) -> str:
        head = (
            f"R{PROTOCOL_VERSION:02d}{_name_field(self.name)}{_colour_char(self.follower_white)}"
            f"{_minutes_field(self.minutes)}{_digits(self.moves, 3, 'number of moves')}"
        )
        if self.position is None:
            return head + "A"
        return head + "B" + _colour_char(self.position.white_to_move) + self.position.squares

    @classmethod
    def from_text(cls, text: str) -> "GameRequest":
        version = _number(text, 1, 2, "protocol version") if text[1:3].isdigit() else None
        if version is not None and version != PROTOCOL_VERSION:
            raise UnsupportedVersionError(text, version)
        try:
            return cls._fields(text)
        except GameRequestError:
            raise
        except DxpError as exc:  # answered with a refusal: say which field is wrong
            raise GameRequestError(text, exc.reason) from None

    @classmethod
    def _fields(cls, text: str) -> "GameRequest":
        _number(text, 1, 2, "protocol version")
        if len(text) not in (43, 94):
            raise DxpError(text, f"a GAMEREQ has 43 (form A) or 94 (form B) characters, not {len(text)}")
        name = text[3:35].rstrip(" ")
        follower_white = _colour(text, 35, "follower colour")
        minutes = _number(text, 36, 3, "thinking time (whole minutes)")
        moves = _number(text, 39, 3, "number of moves")
        form = text[42]
        if form == "A":
            if len(text) != 43:
                raise DxpError(text, "a form A GAMEREQ ends after the position indicator")
            return cls(name, follower_white, minutes, moves, None)
        if form != "B":
            raise DxpError(text, f"starting position must be A or B, not {form!r}")
        if len(text) != 94:
            raise DxpError(text, f"a form B GAMEREQ has 94 characters, not {len(text)}")
        white_to_move = _colour(text, 43, "colour to move")
        squares = text[44:94]
        bad = set(squares) - _PIECES
        if bad:
            raise DxpError(text, f"unknown piece letters {''.join(sorted(bad))!r} in the position")
        return cls(name, follower_white, minutes, moves, DxpPosition(white_to_move, squares))


@dataclass(frozen=True)
class GameAccept:
    """GAMEACC ``A``: the follower's answer to a GAMEREQ."""

    name: str
    code: AcceptCode = AcceptCode.ACCEPTED

    HEADER = "A"

    def to_text(self) -> str:
        return f"A{_name_field(self.name)}{int(AcceptCode(self.code))}"

    @classmethod
    def from_text(cls, text: str) -> "GameAccept":
        if len(text) != 34:
            raise DxpError(text, f"a GAMEACC has 34 characters, not {len(text)}")
        code = _number(text, 33, 1, "acceptance code", 0, 3)
        return cls(text[1:33].rstrip(" "), AcceptCode(code))


@dataclass(frozen=True)
class DxpMove:
    """MOVE ``M``: square numbers 1..50; ``captured`` in any order (kept as given);
    ``seconds`` is the sender's thinking time for this move (informational)."""

    origin: int
    destination: int
    captured: tuple[int, ...] = ()
    seconds: int = 0

    HEADER = "M"

    def __post_init__(self) -> None:
        if not isinstance(self.captured, tuple):
            object.__setattr__(self, "captured", tuple(self.captured))

    def to_text(self) -> str:
        if len(self.captured) > MAX_CAPTURED:
            raise ValueError(f"at most {MAX_CAPTURED} captured pieces, not {len(self.captured)}")
        if len(set(self.captured)) != len(self.captured):
            raise ValueError(f"a piece is captured twice: {self.captured}")
        parts = [
            "M",
            _digits(min(max(int(self.seconds), 0), 9999), 4, "time"),
            _digits(self.origin, 2, "from square", 1, SQUARES),
            _digits(self.destination, 2, "to square", 1, SQUARES),
            _digits(len(self.captured), 2, "number captured"),
        ]
        parts += [_digits(s, 2, "captured square", 1, SQUARES) for s in self.captured]
        return "".join(parts)

    @classmethod
    def from_text(cls, text: str) -> "DxpMove":
        if len(text) < 11:
            raise DxpError(text, f"a MOVE has at least 11 characters, not {len(text)}")
        seconds = _number(text, 1, 4, "time")
        origin = _square(text, 5, "from square")
        destination = _square(text, 7, "to square")
        count = _number(text, 9, 2, "number captured", 0, MAX_CAPTURED)
        if len(text) != 11 + 2 * count:
            raise DxpError(text, f"a MOVE capturing {count} has {11 + 2 * count} characters, not {len(text)}")
        captured = tuple(_square(text, 11 + 2 * i, "captured square") for i in range(count))
        if len(set(captured)) != count:
            raise DxpError(text, "a captured square is given twice")
        return cls(origin, destination, captured, seconds)

    @property
    def captured_set(self) -> frozenset[int]:
        return frozenset(self.captured)


@dataclass(frozen=True)
class GameEnd:
    """GAMEEND ``E``: ``reason`` from the sender's point of view; ``stop`` True (code 1)
    means no further games."""

    reason: EndReason = EndReason.UNKNOWN
    stop: bool = False

    HEADER = "E"

    def to_text(self) -> str:
        return f"E{int(EndReason(self.reason))}{int(bool(self.stop))}"

    @classmethod
    def from_text(cls, text: str) -> "GameEnd":
        if len(text) != 3:
            raise DxpError(text, f"a GAMEEND has 3 characters, not {len(text)}")
        reason = _number(text, 1, 1, "reason", 0, 3)
        stop = _number(text, 2, 1, "stop code", 0, 1)
        return cls(EndReason(reason), bool(stop))


@dataclass(frozen=True)
class Chat:
    """CHAT ``C``: free text, at any time."""

    text: str

    HEADER = "C"

    def to_text(self) -> str:
        if not 1 <= len(self.text) <= MAX_LENGTH - 1:
            raise ValueError(f"a CHAT text has 1..{MAX_LENGTH - 1} characters, not {len(self.text)}")
        _check_ascii(self.text)
        return "C" + self.text

    @classmethod
    def from_text(cls, text: str) -> "Chat":
        return cls(text[1:])

    @classmethod
    def safe(cls, text: str) -> "Chat":
        """A CHAT of any text: non-ASCII and control characters become '?', and it is cut to
        fit (for messages that quote what a peer sent)."""
        clean = "".join(ch if 32 <= ord(ch) <= 126 else "?" for ch in text) or "?"
        if len(clean) > MAX_LENGTH - 1:
            clean = clean[: MAX_LENGTH - 4] + "..."
        return cls(clean)


@dataclass(frozen=True)
class BackRequest:
    """BACKREQ ``B``: go back to move ``move_number`` (1 = the first move of the game) with
    ``white_to_move`` saying whose turn it is there."""

    move_number: int
    white_to_move: bool

    HEADER = "B"

    def to_text(self) -> str:
        return f"B{_digits(self.move_number, 3, 'move number', 1, 999)}{_colour_char(self.white_to_move)}"

    @classmethod
    def from_text(cls, text: str) -> "BackRequest":
        if len(text) != 5:
            raise DxpError(text, f"a BACKREQ has 5 characters, not {len(text)}")
        return cls(_number(text, 1, 3, "move number", 1, 999), _colour(text, 4, "colour to move"))


@dataclass(frozen=True)
class BackAccept:
    """BACKACC ``K``: the answer to a BACKREQ."""

    code: BackCode = BackCode.ACCEPTED

    HEADER = "K"

    def to_text(self) -> str:
        return f"K{int(BackCode(self.code))}"

    @classmethod
    def from_text(cls, text: str) -> "BackAccept":
        if len(text) != 2:
            raise DxpError(text, f"a BACKACC has 2 characters, not {len(text)}")
        return cls(BackCode(_number(text, 1, 1, "acceptance code", 0, 2)))


Message = Union[GameRequest, GameAccept, DxpMove, GameEnd, Chat, BackRequest, BackAccept]

_TYPES = {t.HEADER: t for t in (GameRequest, GameAccept, DxpMove, GameEnd, Chat, BackRequest, BackAccept)}


def decode(text: str) -> Message:
    """The message of one frame's text (without its NUL); DxpError if it breaks the layout."""
    if not text:
        raise DxpError(text, "empty message")
    if len(text) > MAX_LENGTH:
        raise DxpError(text, f"message longer than {MAX_LENGTH} characters")
    _check_ascii(text)
    kind = _TYPES.get(text[0])
    if kind is None:
        raise DxpError(text, f"unknown message type {text[0]!r}")
    return kind.from_text(text)


def encode(message: Message) -> bytes:
    """The bytes to send for a message: its text and the terminating NUL."""
    text = message.to_text()
    if len(text) > MAX_LENGTH:  # cannot happen with the layouts above; a guard for CHAT
        raise ValueError(f"message longer than {MAX_LENGTH} characters")
    return text.encode("ascii") + b"\0"


class Reassembler:
    """Splits a byte stream into message texts at NUL bytes, across reads.

    ``feed`` takes whatever one ``recv`` returned (part of a message, several messages, or
    both) and returns the texts completed by it. Empty frames are skipped. A frame longer
    than MAX_LENGTH is not kept whole: its first MAX_LENGTH + 1 characters are returned when
    its NUL arrives (so decode refuses it) and the rest is dropped, which bounds the memory a
    peer can make us hold. Bytes are read as Latin-1, so non-ASCII reaches decode and is
    refused there rather than breaking the stream.
    """

    def __init__(self) -> None:
        self._parts: list[bytes] = []
        self._size = 0

    @property
    def pending(self) -> int:
        """Bytes held of a message whose NUL has not arrived yet."""
        return self._size

    def feed(self, data: bytes) -> list[str]:
        out: list[str] = []
        chunks = data.split(b"\0")
        for i, chunk in enumerate(chunks):
            if chunk and self._size <= MAX_LENGTH:  # (past that: over-long, drop the rest)
                keep = chunk[: MAX_LENGTH + 1 - self._size]
                self._parts.append(keep)
                self._size += len(keep)
            if i < len(chunks) - 1:  # a NUL ended this frame
                if self._parts:
                    out.append(b"".join(self._parts).decode("latin-1"))
                self._parts.clear()
                self._size = 0
        return out
