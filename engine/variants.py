"""The rule sets damka plays: one frozen record per rule set and a registry with aliases.

Every rule difference between the seven rule sets is a field here; the fast core and the
reference generator read the record, there is no global variant switch.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import IntEnum

from .errors import UnknownVariantError


class Precedence(IntEnum):
    """Which captures may be chosen when several are possible (the core uses the numbers)."""

    FREE = 0  #: any capture (English, Russian)
    QUANTITY = 1  #: the most pieces (international, Brazilian)
    QUANTITY_THEN_KINGS = 2  #: the most pieces, then the most kings (Spanish)
    ITALIAN = 3  #: most pieces, then with a king, then most kings, then the earliest king
    KING_PRIORITY = 4  #: if a king can capture, a king must capture (Czech)

    @property
    def most_pieces(self) -> bool:
        """True when the capture taking the most pieces must be chosen (the quantity rule)."""
        return self in (Precedence.QUANTITY, Precedence.QUANTITY_THEN_KINGS, Precedence.ITALIAN)


class CapturePromotion(IntEnum):
    """What happens when a man reaches the far row in the middle of a capture."""

    PASS = 0  #: it stays a man and goes on capturing; crowned only if the move ends there
    CONTINUE_AS_KING = 1  #: crowned at once and goes on capturing as a king (Russian)
    STOP = 2  #: crowned and the move ends (men that capture only forward)


@dataclass(frozen=True)
class DrawRules:
    """The automatic draws of a rule set; counts are moves by each side."""

    repetitions: int = 3
    #: successive moves by each side with only kings moving and nothing captured (international)
    king_moves: int | None = None
    #: lone king against three pieces (one a king): draw after this many further moves each
    endgame_three: int | None = None
    #: lone king against at most two pieces (one a king): draw after this many moves each
    endgame_two: int | None = None
    #: moves by each side without a capture and without a crowning (8x8 sets)
    no_progress: int | None = None


INTERNATIONAL_DRAWS = DrawRules(king_moves=25, endgame_three=16, endgame_two=5)
EIGHT_BY_EIGHT_DRAWS = DrawRules(no_progress=40)


@dataclass(frozen=True)
class Variant:
    """The complete rules of one rule set.

    Squares are written in the rule set's own notation (``numbering``); inside the engine
    they are 0-based indices on a board with White at the bottom moving up (see squares.py).
    """

    name: str
    title: str
    aliases: tuple[str, ...]
    size: int  #: 8 or 10
    men_capture_backwards: bool
    flying_kings: bool
    men_capture_kings: bool
    precedence: Precedence
    capture_promotion: CapturePromotion
    white_starts: bool
    start_fen: str
    pdn_gametype: str  #: the full PDN GameType tag value
    numbering: str  #: "international", "english", "italian", "spanish" or "algebraic"
    capture_separator: str  #: "x", or ":" for Russian
    hub_name: str  #: the value of the Hub ``variant`` parameter
    draws: DrawRules
    #: the rule book removes each jumped piece at once (English) instead of at the end of the
    #: move; with short kings and men that capture only forwards no legal move depends on it,
    #: so the engine keeps captured pieces on the board until the move ends in every rule set
    removes_captured_at_once: bool = False
    forced_capture: bool = True  #: False is the "no forced capture" house rule (8x8 only)

    @property
    def squares(self) -> int:
        return self.size * self.size // 2

    @property
    def gametype(self) -> int:
        """The PDN GameType number."""
        return int(self.pdn_gametype.split(",")[0])

    @property
    def algebraic(self) -> bool:
        return self.numbering == "algebraic"

    @property
    def turned_board(self) -> bool:
        """The board is turned so that each player's near-right corner is a playing square
        (Italian, Spanish); the engine maps it onto the others' geometry as a mirror image."""
        return self.numbering in ("italian", "spanish")

    def with_forced_capture(self, forced: bool) -> "Variant":
        """This rule set with or without the "no forced capture" house rule."""
        if forced == self.forced_capture:
            return self
        if not forced and self.size != 8:
            raise ValueError("the no-forced-capture house rule exists only for the 8x8 rule sets")
        return replace(self, forced_capture=forced)

    def __str__(self) -> str:
        return self.name if self.forced_capture else f"{self.name} (no forced capture)"


_ALGEBRAIC_START = (
    "W:Wa1,c1,e1,g1,b2,d2,f2,h2,a3,c3,e3,g3:Bb6,d6,f6,h6,a7,c7,e7,g7,b8,d8,f8,h8"
)

INTERNATIONAL = Variant(
    name="international",
    title="International draughts (10x10, FMJD)",
    aliases=("standard", "normal", "10x10", "fmjd", "international draughts", "polish"),
    size=10,
    men_capture_backwards=True,
    flying_kings=True,
    men_capture_kings=True,
    precedence=Precedence.QUANTITY,
    capture_promotion=CapturePromotion.PASS,
    white_starts=True,
    start_fen="W:W31-50:B1-20",
    pdn_gametype="20,W,10,10,N2,0",
    numbering="international",
    capture_separator="x",
    hub_name="normal",
    draws=INTERNATIONAL_DRAWS,
)

ENGLISH = Variant(
    name="english",
    title="English draughts / American checkers",
    aliases=("american", "checkers", "english draughts", "american checkers", "draughts"),
    size=8,
    men_capture_backwards=False,
    flying_kings=False,
    men_capture_kings=True,
    precedence=Precedence.FREE,
    capture_promotion=CapturePromotion.STOP,
    white_starts=False,
    start_fen="B:W21-32:B1-12",
    pdn_gametype="21,B,8,8,N1,0",
    numbering="english",
    capture_separator="x",
    hub_name="english",
    draws=EIGHT_BY_EIGHT_DRAWS,
    removes_captured_at_once=True,
)

RUSSIAN = Variant(
    name="russian",
    title="Russian draughts (shashki)",
    aliases=("shashki", "russian draughts"),
    size=8,
    men_capture_backwards=True,
    flying_kings=True,
    men_capture_kings=True,
    precedence=Precedence.FREE,
    capture_promotion=CapturePromotion.CONTINUE_AS_KING,
    white_starts=True,
    start_fen=_ALGEBRAIC_START,
    pdn_gametype="25,W,8,8,A0,0",
    numbering="algebraic",
    capture_separator=":",
    hub_name="russian",
    draws=EIGHT_BY_EIGHT_DRAWS,
)

BRAZILIAN = Variant(
    name="brazilian",
    title="Brazilian draughts",
    aliases=("brazil", "brazilian draughts"),
    size=8,
    men_capture_backwards=True,
    flying_kings=True,
    men_capture_kings=True,
    precedence=Precedence.QUANTITY,
    capture_promotion=CapturePromotion.PASS,
    white_starts=True,
    start_fen=_ALGEBRAIC_START,
    pdn_gametype="26,W,8,8,A0,0",
    numbering="algebraic",
    capture_separator="x",
    hub_name="brazilian",
    draws=EIGHT_BY_EIGHT_DRAWS,
)

SPANISH = Variant(
    name="spanish",
    title="Spanish draughts (damas)",
    aliases=("damas", "spanish draughts"),
    size=8,
    men_capture_backwards=False,
    flying_kings=True,
    men_capture_kings=True,
    precedence=Precedence.QUANTITY_THEN_KINGS,
    capture_promotion=CapturePromotion.STOP,
    white_starts=True,
    start_fen="W:W1-12:B21-32",
    pdn_gametype="24,W,8,8,N1,1",
    numbering="spanish",
    capture_separator="x",
    hub_name="spanish",
    draws=EIGHT_BY_EIGHT_DRAWS,
)

ITALIAN = Variant(
    name="italian",
    title="Italian draughts (dama italiana)",
    aliases=("dama", "dama italiana", "italian draughts"),
    size=8,
    men_capture_backwards=False,
    flying_kings=False,
    men_capture_kings=False,
    precedence=Precedence.ITALIAN,
    capture_promotion=CapturePromotion.STOP,
    white_starts=True,
    start_fen="W:W21-32:B1-12",
    pdn_gametype="22,W,8,8,N2,1",
    numbering="italian",
    capture_separator="x",
    hub_name="italian",
    draws=EIGHT_BY_EIGHT_DRAWS,
)

CZECH = Variant(
    name="czech",
    title="Czech draughts (ceska dama)",
    aliases=("ceska dama", "czech draughts", "česká dáma"),
    size=8,
    men_capture_backwards=False,
    flying_kings=True,
    men_capture_kings=True,
    precedence=Precedence.KING_PRIORITY,
    capture_promotion=CapturePromotion.STOP,
    white_starts=True,
    start_fen=_ALGEBRAIC_START,
    pdn_gametype="29,W,8,8,A0,0",
    numbering="algebraic",
    capture_separator="x",
    hub_name="czech",
    draws=EIGHT_BY_EIGHT_DRAWS,
)

VARIANTS: tuple[Variant, ...] = (INTERNATIONAL, ENGLISH, RUSSIAN, BRAZILIAN, SPANISH, ITALIAN, CZECH)

_BY_NAME: dict[str, Variant] = {}
for _v in VARIANTS:
    for _key in (_v.name, _v.hub_name, *_v.aliases, str(_v.gametype)):
        _BY_NAME.setdefault(_key.casefold(), _v)

#: suffixes that ask for the "no forced capture" house rule, as in "russian-nocapture"
_HOUSE_RULE_SUFFIXES = ("-nocapture", "-free", "+nofc", "-nofc")


def get_variant(name: "str | Variant", forced_capture: bool | None = None) -> Variant:
    """Resolve a rule-set name or alias (case-insensitive) to its record.

    ``forced_capture=False`` (or a name ending in ``-nocapture``) gives the house rule. A
    Variant is given back as it is (with the house rule applied when ``forced_capture`` asks
    for it): no lookup. Names are resolved once, where they come in (a command line, a Hub
    ``set-param``, a browser request, a PDN ``GameType`` tag, a data file): front ends call
    this and pass the record on; inside the library functions take the record.
    """
    if isinstance(name, Variant):
        variant = name
    else:
        key = " ".join(str(name).split()).casefold()
        house_rule = False
        for suffix in _HOUSE_RULE_SUFFIXES:
            if key.endswith(suffix):
                key, house_rule = key[: -len(suffix)], True
                break
        try:
            variant = _BY_NAME[key]
        except KeyError:
            known = ", ".join(v.name for v in VARIANTS)
            raise UnknownVariantError(f"unknown variant {name!r} (known: {known})") from None
        if house_rule:
            variant = variant.with_forced_capture(False)
    if forced_capture is not None:
        variant = variant.with_forced_capture(forced_capture)
    return variant


def as_variant(variant: "str | Variant") -> Variant:
    """What a public entry point that also takes a name (``Board("russian")``, ``Game``,
    ``Engine``, ``read_games``, ...) was given, as a record: a Variant as it is, a name
    resolved by get_variant (UnknownVariantError when unknown). Library code passes the
    record it has, so this looks a name up only for a caller that gave one."""
    return variant if isinstance(variant, Variant) else get_variant(variant)


def variant_names() -> list[str]:
    return [v.name for v in VARIANTS]
