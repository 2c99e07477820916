# cython: language_level=3
"""The fast move generator: bitboards, legal moves for every rule set, make-move and perft.

One core serves all seven rule sets: the rules arrive as a C struct (``Rules``), built from
the Python rules record by ``CoreRules``. Hot paths are C only (``noexcept nogil``).
"""

from libc.stdint cimport uint64_t, uint32_t, uint8_t, int8_t
from libc.string cimport memcpy

from _fast.bits cimport popcount, lsb

BACKEND = "cython"


# ---------------------------------------------------------------------------------------
# Board geometry

cdef inline uint64_t shift(uint64_t b, int d, const Rules* r) noexcept nogil:
    """All of ``b`` moved one diagonal step in direction d (0 UL, 1 UR, 2 DL, 3 DR)."""
    if d < 2:
        return b >> r.shift[d]
    return b << r.shift[d]


cdef inline int bit_of(int size, int s) noexcept nogil:
    return s + s // size


cdef void init_rules(Rules* r, int size, int men_back, int flying, int men_take_kings,
                     int precedence, int capture_promotion, int forced) noexcept nogil:
    cdef int half = size // 2
    cdef int s, row, col, d, nrow, ncol, ns
    cdef int drow[4]
    cdef int dcol[4]
    drow[0] = -1; dcol[0] = -1
    drow[1] = -1; dcol[1] = 1
    drow[2] = 1; dcol[2] = -1
    drow[3] = 1; dcol[3] = 1
    r.size = size
    r.half = half
    r.nsq = size * half
    r.shift[0] = half + 1
    r.shift[1] = half
    r.shift[2] = half
    r.shift[3] = half + 1
    r.men_back = men_back
    r.flying = flying
    r.men_take_kings = men_take_kings
    r.precedence = precedence
    r.capture_promotion = capture_promotion
    r.forced = forced
    r.valid = 0
    r.promo[0] = 0
    r.promo[1] = 0
    for s in range(64):
        for d in range(4):
            r.nb[s][d] = -1
    for s in range(r.nsq):
        r.valid |= (<uint64_t>1) << bit_of(size, s)
        row = s // half
        col = 2 * (s % half) + (1 if row % 2 == 0 else 0)
        if row == 0:
            r.promo[WHITE] |= (<uint64_t>1) << bit_of(size, s)
        if row == size - 1:
            r.promo[BLACK] |= (<uint64_t>1) << bit_of(size, s)
        for d in range(4):
            nrow = row + drow[d]
            ncol = col + dcol[d]
            if 0 <= nrow < size and 0 <= ncol < size:
                ns = nrow * half + ncol // 2
                r.nb[bit_of(size, s)][d] = <int8_t>bit_of(size, ns)


cdef void fill_cones(const Rules* r, uint64_t cone[2][64]) noexcept nogil:
    """The cone in front of a man, per side and bit: every square (any row ahead, at most one
    column more aside than rows ahead) from which an opponent piece could stop its run."""
    cdef int size = r.size
    cdef int half = size // 2
    cdef int s, s2, row, col, row2, col2, side, ahead, aside
    for side in range(2):
        for s in range(64):
            cone[side][s] = 0
    for s in range(r.nsq):
        row = s // half
        col = 2 * (s % half) + (1 if row % 2 == 0 else 0)
        for s2 in range(r.nsq):
            row2 = s2 // half
            col2 = 2 * (s2 % half) + (1 if row2 % 2 == 0 else 0)
            aside = col2 - col if col2 >= col else col - col2
            for side in range(2):
                ahead = row - row2 if side == WHITE else row2 - row
                if ahead >= 1 and aside <= ahead + 1:
                    cone[side][bit_of(size, s)] |= (<uint64_t>1) << bit_of(size, s2)


# ---------------------------------------------------------------------------------------
# Captures: a depth-first search per piece. Captured pieces stay on the board as blockers
# until the move ends (the Turkish strike rule); the mover's origin counts as empty.

ctypedef struct CaptureSearch:
    const Rules* r
    MoveList* out
    PathList* paths
    uint64_t opp        # the opponent's pieces
    uint64_t kings      # all kings on the board
    uint64_t empty      # empty squares, the mover's origin included
    uint64_t best_key   # precedence key of the moves in out (captures only)
    int origin
    int mover_is_king
    int crowned         # a man crowned mid-capture goes on as a king (Russian)
    uint8_t path[MAX_PATH]


cdef inline uint64_t precedence_key(CaptureSearch* c, uint64_t captured, int n,
                                    uint32_t king_order) noexcept nogil:
    cdef int prec = c.r.precedence
    if prec == PREC_FREE:
        return 0
    if prec == PREC_QUANTITY:
        return <uint64_t>n
    if prec == PREC_QUANTITY_KINGS:
        return ((<uint64_t>n) << 8) | <uint64_t>popcount(captured & c.kings)
    if prec == PREC_ITALIAN:
        # most pieces, then with a king, then most kings, then the earliest kings
        return (((<uint64_t>n) << 48) | ((<uint64_t>c.mover_is_king) << 47)
                | ((<uint64_t>popcount(captured & c.kings)) << 40) | <uint64_t>king_order)
    # PREC_KING_PRIORITY
    return <uint64_t>c.mover_is_king


cdef void emit(CaptureSearch* c, int dest, uint64_t captured, int n, uint32_t king_order,
               int promote) noexcept nogil:
    """Record a finished capture unless precedence forbids it or it is a duplicate."""
    cdef uint64_t key = precedence_key(c, captured, n, king_order)
    cdef MoveList* out = c.out
    cdef int i
    cdef Move* m
    if key < c.best_key:
        return
    if key > c.best_key:
        out.count = 0
        c.best_key = key
    for i in range(out.count):
        m = &out.moves[i]
        if (m.captured == captured and m.dest == dest and m.origin == c.origin
                and m.promote == promote):
            return
    if out.count >= MAX_MOVES:
        return
    m = &out.moves[out.count]
    m.captured = captured
    m.origin = <uint8_t>c.origin
    m.dest = <uint8_t>dest
    m.ncapt = <uint8_t>n
    m.promote = <uint8_t>promote
    if c.paths != NULL:
        c.path[n] = <uint8_t>dest
        c.paths.len[out.count] = <uint8_t>(n + 1)
        memcpy(&c.paths.squares[out.count][0], &c.path[0], n + 1)
    out.count += 1


cdef inline uint32_t king_bit(CaptureSearch* c, int victim, int n) noexcept nogil:
    if (c.kings >> victim) & 1:
        return (<uint32_t>1) << (31 - n)
    return 0


cdef int king_captures(CaptureSearch* c, int sq, uint64_t captured, int n,
                       uint32_t king_order) noexcept nogil:
    """Continue a capture with a king standing on sq; returns 1 if any jump exists."""
    cdef const Rules* r = c.r
    cdef int found = 0
    cdef int d, t, land, cont, any_cont, nterm, i
    cdef uint64_t now_captured
    cdef uint32_t order
    cdef int8_t terminals[16]
    for d in range(4):
        t = r.nb[sq][d]
        if r.flying:
            while t >= 0 and (c.empty >> t) & 1:
                t = r.nb[t][d]
        if t < 0 or not ((c.opp & ~captured) >> t) & 1:
            continue
        land = r.nb[t][d]
        if land < 0 or not (c.empty >> land) & 1:
            continue
        found = 1
        now_captured = captured | ((<uint64_t>1) << t)
        order = king_order | king_bit(c, t, n)
        any_cont = 0
        nterm = 0
        while land >= 0 and (c.empty >> land) & 1:
            c.path[n + 1] = <uint8_t>land
            cont = king_captures(c, land, now_captured, n + 1, order)
            if cont:
                any_cont = 1
            elif not any_cont:
                terminals[nterm] = <int8_t>land
                nterm += 1
            if not r.flying:
                break
            land = r.nb[land][d]
        if not any_cont:
            # the king may stop on any landing square only when none of them goes on
            for i in range(nterm):
                emit(c, terminals[i], now_captured, n + 1, order, c.crowned)
    return found


cdef int man_captures(CaptureSearch* c, int sq, int side, uint64_t captured, int n,
                      uint32_t king_order) noexcept nogil:
    """Continue a capture with a man standing on sq; returns 1 if any jump exists."""
    cdef const Rules* r = c.r
    cdef int found = 0
    cdef int d, d0, d1, t, land, cont
    cdef uint64_t victims = c.opp & ~captured
    cdef uint64_t now_captured
    cdef uint32_t order
    if not r.men_take_kings:
        victims &= ~c.kings
    if r.men_back:
        d0 = 0; d1 = 4
    elif side == WHITE:
        d0 = 0; d1 = 2
    else:
        d0 = 2; d1 = 4
    for d in range(d0, d1):
        t = r.nb[sq][d]
        if t < 0 or not (victims >> t) & 1:
            continue
        land = r.nb[t][d]
        if land < 0 or not (c.empty >> land) & 1:
            continue
        found = 1
        now_captured = captured | ((<uint64_t>1) << t)
        order = king_order | king_bit(c, t, n)
        c.path[n + 1] = <uint8_t>land
        if (r.promo[side] >> land) & 1:
            if r.capture_promotion == PROMO_PASS:
                cont = man_captures(c, land, side, now_captured, n + 1, order)
            elif r.capture_promotion == PROMO_CONTINUE:
                c.crowned = 1
                cont = king_captures(c, land, now_captured, n + 1, order)
                c.crowned = 0
            else:
                cont = 0
            if not cont:
                emit(c, land, now_captured, n + 1, order, 1)
        else:
            cont = man_captures(c, land, side, now_captured, n + 1, order)
            if not cont:
                emit(c, land, now_captured, n + 1, order, 0)
    return found


cdef inline uint64_t man_capture_dirs_jumpers(const Rules* r, uint64_t men, uint64_t victims,
                                              uint64_t empty, int side) noexcept nogil:
    """The men that have at least one jump (a cheap filter before the search)."""
    cdef uint64_t jumpers = 0
    cdef int d, d0, d1
    if r.men_back:
        d0 = 0; d1 = 4
    elif side == WHITE:
        d0 = 0; d1 = 2
    else:
        d0 = 2; d1 = 4
    for d in range(d0, d1):
        jumpers |= shift(shift(empty, 3 - d, r) & victims, 3 - d, r)
    return jumpers & men


cdef int generate_captures(const Rules* r, const Pos* p, MoveList* out,
                           PathList* paths) noexcept nogil:
    cdef CaptureSearch c
    cdef int side = p.side
    cdef uint64_t own = p.pieces[side]
    cdef uint64_t men = own & ~p.kings
    cdef uint64_t kings = own & p.kings
    cdef uint64_t victims, jumpers, bit
    cdef int sq
    c.r = r
    c.out = out
    c.paths = paths
    c.opp = p.pieces[1 - side]
    c.kings = p.kings
    c.best_key = 0
    c.crowned = 0
    out.count = 0
    cdef uint64_t empty = r.valid & ~(own | c.opp)
    victims = c.opp if r.men_take_kings else c.opp & ~p.kings
    jumpers = man_capture_dirs_jumpers(r, men, victims, empty, side)
    while jumpers:
        sq = lsb(jumpers)
        jumpers &= jumpers - 1
        bit = (<uint64_t>1) << sq
        c.origin = sq
        c.mover_is_king = 0
        c.empty = empty | bit
        c.path[0] = <uint8_t>sq
        man_captures(&c, sq, side, 0, 0, 0)
    while kings:
        sq = lsb(kings)
        kings &= kings - 1
        bit = (<uint64_t>1) << sq
        c.origin = sq
        c.mover_is_king = 1
        c.empty = empty | bit
        c.path[0] = <uint8_t>sq
        king_captures(&c, sq, 0, 0, 0)
    return out.count


# ---------------------------------------------------------------------------------------
# Quiet moves

cdef inline void add_quiet(MoveList* out, PathList* paths, int origin, int dest,
                           int promote) noexcept nogil:
    if out.count >= MAX_MOVES:
        return
    cdef Move* m = &out.moves[out.count]
    m.captured = 0
    m.origin = <uint8_t>origin
    m.dest = <uint8_t>dest
    m.ncapt = 0
    m.promote = <uint8_t>promote
    if paths != NULL:
        paths.len[out.count] = 2
        paths.squares[out.count][0] = <uint8_t>origin
        paths.squares[out.count][1] = <uint8_t>dest
    out.count += 1


cdef void generate_quiet(const Rules* r, const Pos* p, MoveList* out,
                         PathList* paths) noexcept nogil:
    cdef int side = p.side
    cdef uint64_t own = p.pieces[side]
    cdef uint64_t empty = r.valid & ~(own | p.pieces[1 - side])
    cdef uint64_t men = own & ~p.kings
    cdef uint64_t kings = own & p.kings
    cdef uint64_t dests
    cdef int d, d0, dest, origin, sq, t
    d0 = 0 if side == WHITE else 2
    for d in range(d0, d0 + 2):
        dests = shift(men, d, r) & empty
        while dests:
            dest = lsb(dests)
            dests &= dests - 1
            origin = dest + r.shift[d] if d < 2 else dest - r.shift[d]
            add_quiet(out, paths, origin, dest, <int>((r.promo[side] >> dest) & 1))
    while kings:
        sq = lsb(kings)
        kings &= kings - 1
        for d in range(4):
            t = r.nb[sq][d]
            while t >= 0 and (empty >> t) & 1:
                add_quiet(out, paths, sq, t, 0)
                if not r.flying:
                    break
                t = r.nb[t][d]


cdef int generate(const Rules* r, const Pos* p, MoveList* out, PathList* paths) noexcept nogil:
    """All legal moves of the side to move: captures (by precedence) first, then quiet moves."""
    generate_captures(r, p, out, paths)
    if out.count == 0 or not r.forced:
        generate_quiet(r, p, out, paths)
    return out.count


cdef int has_capture(const Rules* r, const Pos* p) noexcept nogil:
    """Whether the side to move has any capture (bitboard test, no search)."""
    cdef int side = p.side
    cdef uint64_t own = p.pieces[side]
    cdef uint64_t opp = p.pieces[1 - side]
    cdef uint64_t empty = r.valid & ~(own | opp)
    cdef uint64_t men = own & ~p.kings
    cdef uint64_t kings = own & p.kings
    cdef uint64_t victims = opp if r.men_take_kings else opp & ~p.kings
    cdef uint64_t fill, step
    cdef int d
    if man_capture_dirs_jumpers(r, men, victims, empty, side):
        return 1
    if kings:
        for d in range(4):
            fill = kings
            if r.flying:
                step = shift(fill, d, r) & empty
                while step:
                    fill |= step
                    step = shift(step, d, r) & empty
            if shift(shift(fill, d, r) & opp, d, r) & empty:
                return 1
    return 0


cdef int count_quiet(const Rules* r, const Pos* p) noexcept nogil:
    cdef int side = p.side
    cdef uint64_t own = p.pieces[side]
    cdef uint64_t empty = r.valid & ~(own | p.pieces[1 - side])
    cdef uint64_t men = own & ~p.kings
    cdef uint64_t kings = own & p.kings
    cdef uint64_t step
    cdef int d, n = 0
    cdef int d0 = 0 if side == WHITE else 2
    n = popcount(shift(men, d0, r) & empty) + popcount(shift(men, d0 + 1, r) & empty)
    if kings:
        for d in range(4):
            step = shift(kings, d, r) & empty
            while step:
                n += popcount(step)
                if not r.flying:
                    break
                step = shift(step, d, r) & empty
    return n


cdef void make_move(const Pos* p, const Move* m, Pos* out) noexcept nogil:
    cdef int side = p.side
    cdef uint64_t frm = (<uint64_t>1) << m.origin
    cdef uint64_t to = (<uint64_t>1) << m.dest
    cdef uint64_t kings = p.kings & ~m.captured
    out.pieces[side] = (p.pieces[side] ^ frm) | to
    out.pieces[1 - side] = p.pieces[1 - side] & ~m.captured
    if kings & frm:
        kings = (kings ^ frm) | to
    elif m.promote:
        kings |= to
    out.kings = kings
    out.side = 1 - side


cdef uint64_t perft_nodes(const Rules* r, const Pos* p, int depth) noexcept nogil:
    """Leaf count, with bulk counting at the last ply."""
    cdef MoveList ml
    cdef Pos child
    cdef uint64_t total = 0
    cdef int i
    if depth <= 0:
        return 1
    if depth == 1:
        if not has_capture(r, p):
            return <uint64_t>count_quiet(r, p)
        generate_captures(r, p, &ml, NULL)
        if r.forced:
            return <uint64_t>ml.count
        return <uint64_t>(ml.count + count_quiet(r, p))
    generate(r, p, &ml, NULL)
    for i in range(ml.count):
        make_move(p, &ml.moves[i], &child)
        total += perft_nodes(r, &child, depth - 1)
    return total


# ---------------------------------------------------------------------------------------
# Python interface: squares are the engine's 0-based internal squares, masks are Python ints
# with bit s for square s. The ghost layout never leaves this module.

cdef class CoreRules:
    """The C rules struct for one rule set (built from engine.variants.Variant)."""

    def __init__(self, int size, bint men_capture_backwards, bint flying_kings,
                 bint men_capture_kings, int precedence, int capture_promotion,
                 bint forced_capture=True):
        if size not in (8, 10):
            raise ValueError("board size must be 8 or 10")
        if not 0 <= precedence <= 4 or not 0 <= capture_promotion <= 2:
            raise ValueError("unknown precedence or capture promotion")
        self.size = size
        init_rules(&self.rules, size, men_capture_backwards, flying_kings, men_capture_kings,
                   precedence, capture_promotion, forced_capture)

    cdef uint64_t to_bits(self, object mask) except? 0:
        cdef uint64_t out = 0
        cdef int s = 0
        cdef int n = self.rules.nsq
        mask = int(mask)
        if mask < 0 or mask >> n:
            raise ValueError(f"square mask {mask:#x} has squares outside the board")
        while mask:
            if mask & 1:
                out |= (<uint64_t>1) << bit_of(self.size, s)
            mask >>= 1
            s += 1
        return out

    cdef object from_bits(self, uint64_t b):
        cdef object mask = 0
        cdef object square
        cdef int bit
        while b:
            bit = lsb(b)
            b &= b - 1
            square = self.square(bit)
            mask |= (<object>1) << square
        return mask

    cdef int square(self, int bit):
        return bit - bit // (self.size + 1)

    cdef int load(self, Pos* p, object white, object black, object kings,
                  bint white_to_move) except -1:
        p.pieces[WHITE] = self.to_bits(white)
        p.pieces[BLACK] = self.to_bits(black)
        p.kings = self.to_bits(kings)
        if p.pieces[WHITE] & p.pieces[BLACK]:
            raise ValueError("a square holds a white and a black piece")
        if p.kings & ~(p.pieces[WHITE] | p.pieces[BLACK]):
            raise ValueError("a king mask square holds no piece")
        p.side = WHITE if white_to_move else BLACK
        return 0

    cdef object move_tuple(self, Move* m, PathList* paths, int i):
        path = tuple(self.square(paths.squares[i][j]) for j in range(paths.len[i]))
        return (self.square(m.origin), self.square(m.dest), self.from_bits(m.captured),
                path, bool(m.promote))


def legal_moves(CoreRules rules, white, black, kings, bint white_to_move):
    """Legal moves as (origin, destination, captured_mask, path, promotes) tuples."""
    cdef Pos p
    cdef MoveList ml
    cdef PathList paths
    rules.load(&p, white, black, kings, white_to_move)
    with nogil:
        generate(&rules.rules, &p, &ml, &paths)
    return [rules.move_tuple(&ml.moves[i], &paths, i) for i in range(ml.count)]


def perft(CoreRules rules, white, black, kings, bint white_to_move, int depth):
    """Number of leaf nodes depth plies below the position (duplicate captures merged)."""
    cdef Pos p
    cdef uint64_t nodes
    if depth < 0:
        raise ValueError("depth must be >= 0")
    rules.load(&p, white, black, kings, white_to_move)
    with nogil:
        nodes = perft_nodes(&rules.rules, &p, depth)
    return nodes


def perft_children(CoreRules rules, white, black, kings, bint white_to_move, int plies):
    """Every position ``plies`` plies below this one, once per path that reaches it (the
    work list of a parallel perft, whose leaf counts add up to the whole tree's): tuples
    (white, black, kings, white_to_move) of engine masks, in generation order."""
    cdef Pos p
    if plies < 0:
        raise ValueError("plies must be >= 0")
    rules.load(&p, white, black, kings, white_to_move)
    out = []
    _collect_children(rules, &p, plies, out)
    return out


cdef int _collect_children(CoreRules rules, const Pos* p, int plies, list out) except -1:
    cdef MoveList ml
    cdef Pos child
    cdef int i
    if plies == 0:
        out.append((rules.from_bits(p.pieces[WHITE]), rules.from_bits(p.pieces[BLACK]),
                    rules.from_bits(p.kings), p.side == WHITE))
        return 0
    generate(&rules.rules, p, &ml, NULL)
    for i in range(ml.count):
        make_move(p, &ml.moves[i], &child)
        _collect_children(rules, &child, plies - 1, out)
    return 0


def divide(CoreRules rules, white, black, kings, bint white_to_move, int depth):
    """Perft split by root move: a list of (move tuple, nodes)."""
    cdef Pos p, child
    cdef MoveList ml
    cdef PathList paths
    cdef uint64_t nodes
    cdef int i
    if depth < 1:
        raise ValueError("depth must be >= 1")
    rules.load(&p, white, black, kings, white_to_move)
    generate(&rules.rules, &p, &ml, &paths)
    out = []
    for i in range(ml.count):
        make_move(&p, &ml.moves[i], &child)
        with nogil:
            nodes = perft_nodes(&rules.rules, &child, depth - 1)
        out.append((rules.move_tuple(&ml.moves[i], &paths, i), nodes))
    return out


def check_layout(CoreRules rules):
    """True when every one-step shift agrees with the geometric neighbour table."""
    cdef const Rules* r = &rules.rules
    cdef int b, d, nb
    cdef uint64_t moved
    for b in range(64):
        if not (r.valid >> b) & 1:
            continue
        for d in range(4):
            moved = shift((<uint64_t>1) << b, d, r) & r.valid
            nb = r.nb[b][d]
            if nb < 0 and moved:
                return False
            if nb >= 0 and moved != (<uint64_t>1) << nb:
                return False
    return True
