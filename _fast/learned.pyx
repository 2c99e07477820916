# cython: language_level=3
"""The learned evaluation: features of a position and their weighted sum, for both boards.

A position's score (White's view, before it is turned to the side to move) is

    (mg * phase + eg * (P - phase)) / (P * WEIGHT_SCALE * draw_divisor)

rounded half away from zero, where mg and eg are the sums of coefficient x weight over the
position's feature entries (each feature has a middlegame and an endgame weight), phase is the
total distance of the men to their crowning row (P at the start position) and draw_divisor
scales known drawish material toward zero.

Features (all "White minus Black", so the colour-mirrored position scores the exact negative):

- pattern tables: windows of 4x4 squares (8 dark squares) on rows 2p..2p+3 and columns
  2k..2k+3. Each square is a trit (digit 2 white man, 1 empty or a king, 0 black man) and the
  window's base-3 number indexes its table. A table belongs to a window on White's half; the
  window turned 180 degrees reads the same table with its trits negated (colours swapped) and
  the weight's sign flipped, so one table serves both colours.
- edge tables: the strips of 3 files x 6 rows (9 dark squares) on the left and right edge of
  White's half, read in the same way (and turned: the opposite strips on Black's side).
- wide tables (layout 3; Scan 3.1's): windows of 4 files x 6 rows (12 dark squares) on the
  six rows of White's side of the board, one table per column offset 2k (4 on 10x10, 3 on
  8x8), each also read turned. They see combinations of men that no 4x4 window holds; with
  3^12 entries a table they need far more data than the 3^8 tables, and are read only when
  some weight of theirs is non-zero.
- material (men, first king, second king, further kings), trade (ahead, and ahead x pieces
  gone), tempo (rows advanced), side to move, balance (|left - right| and the skew over the
  files), formation (men that cannot move, and those held by an opponent piece), runaway men
  (1..3 rows to go with no opponent piece in front, with and without opponent kings), king
  mobility (empty squares the kings reach, and how many of them an opponent man could capture
  a king on) and a king square table.

Drawish material (layout 2 adds the second 10x10 rule): a lone king against a king /16; on
10x10 a lone king against at most three pieces with a king /2 (/32 on the long diagonal or
against two); failing those, on 10x10, the side ahead in material (a king counts three men;
level: both sides) with at most three pieces against a king /8, or with as many kings as the
other and men within one /2; on 8x8 a lone flying king against at most two pieces /16.

The pattern index costs a few shifts and two table lookups per row pair: ``lut_fwd`` turns
the bits of a row pair into base-3 numbers for every column offset at once (16-bit lanes),
``lut_rev`` the same with the digits reversed (for the turned windows); one multiply-add per
band then gives the table entries of all its windows. The edge tables work the same way:
``lut_edge`` gives a row pair's 3 digits of both strips, three pairs make a strip's index.
"""

from libc.stdint cimport uint64_t, int16_t, int32_t, int64_t, int8_t, uint8_t
from libc.stdlib cimport calloc, malloc, free
from libc.string cimport memset, memcpy
from cython cimport floating
from libc.math cimport floor

from _fast.movegen cimport Rules, Pos, CoreRules, WHITE, BLACK, fill_cones
from _fast.bits cimport popcount, lsb

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline unsigned long long damka_mulhi(unsigned long long a, unsigned long long b) { return __umulh(a, b); }
    #else
    static inline unsigned long long damka_mulhi(unsigned long long a, unsigned long long b) {
        return (unsigned long long)(((unsigned __int128)a * b) >> 64);
    }
    #endif
    """
    unsigned long long damka_mulhi(unsigned long long a, unsigned long long b) noexcept nogil

#: bumped whenever the meaning of a feature changes (part of the layout fingerprint)
LAYOUT_VERSION = 3
SCALE = WEIGHT_SCALE
N_RUNAWAY = 3

SCALAR_GROUPS = (
    ("material", ("men", "first_king", "second_king", "further_kings")),
    ("trade", ("ahead", "ahead_x_pieces_gone")),
    ("tempo", ("rows_advanced",)),
    ("side_to_move", ("to_move",)),
    ("balance", ("wing_difference", "file_skew")),
    ("formation", ("blocked_men", "held_men")),
    ("runaway", ("one_row", "two_rows", "three_rows",
                 "one_row_vs_king", "two_rows_vs_king", "three_rows_vs_king")),
    ("king_mobility", ("squares", "denied_squares")),
)


cdef inline int pc(uint64_t b) noexcept nogil:
    return popcount(b)


cdef inline int iabs(int x) noexcept nogil:
    return x if x >= 0 else -x


cdef inline int bit_of(int size, int s) noexcept nogil:
    return s + s // size


cdef inline int row_of(int size, int s) noexcept nogil:
    return s // (size // 2)


cdef inline int col_of(int size, int s) noexcept nogil:
    cdef int row = s // (size // 2)
    return 2 * (s % (size // 2)) + (1 if row % 2 == 0 else 0)


cdef inline int base3_of(int v, const int* bits, int n, bint reverse) noexcept nogil:
    """The base-3 number whose digit j (of n) is 1 when bit bits[j] of v is set; with
    ``reverse`` digit j is worth 3^(n-1-j) instead of 3^j."""
    cdef int c = 0
    cdef int worth = 1
    cdef int j
    for j in range(n):
        if (v >> bits[n - 1 - j if reverse else j]) & 1:
            c += worth
        worth *= 3
    return c


cdef void init_layout(EvalLayout* L, const Rules* r) noexcept nogil:
    """Geometry, lookup tables and feature offsets for one rule set."""
    cdef int size = r.size
    cdef int half = size // 2
    cdef int nlanes = half - 1
    cdef int s, row, col, b, k, j, v, p, rp, rk, t, rr
    cdef int bits[4]
    cdef int left[3]
    cdef int right[3]
    cdef uint64_t fw, rv, mq, mr
    memset(L, 0, sizeof(EvalLayout))
    L.size = size
    L.half = half
    L.nsq = size * half
    L.npairs = size // 2
    L.pair_mask = ((<uint64_t>1) << size) - 1
    L.valid = r.valid
    L.flying = r.flying
    L.lone_king_draw = 1 if size == 10 else 0
    L.start_pieces = 2 * half * (half - 1)
    for j in range(4):
        L.shift[j] = r.shift[j]
    for k in range(nlanes):
        L.lane_offset |= (<uint64_t>40) << (16 * k)
    for v in range(1 << size):
        fw = 0
        rv = 0
        for k in range(nlanes):
            bits[0] = k
            bits[1] = k + 1
            bits[2] = half + k
            bits[3] = half + k + 1
            fw |= (<uint64_t>base3_of(v, bits, 4, 0)) << (16 * k)
            rv |= (<uint64_t>base3_of(v, bits, 4, 1)) << (16 * k)
        L.lut_fwd[v] = fw
        L.lut_rev[v] = rv
    # tables: windows on White's half (and the centre band once per rotation pair)
    t = 0
    p = L.npairs - 2
    while p >= 0:
        for k in range(nlanes):
            rp = L.npairs - 2 - p
            rk = half - 2 - k
            if p > rp or (p == rp and k <= rk):
                L.fwd_pair[t] = p
                L.fwd_k[t] = k
                L.rot_pair[t] = rp
                L.rot_k[t] = rk
                t += 1
        p -= 1
    L.ntables = t
    # packed table offsets of the two bands (outer: row pairs npairs-2, npairs-1)
    for j in range(2):
        for k in range(4):
            L.band_rot[j] |= (<uint64_t>(TABLE_SIZE - 1)) << (16 * k)  # no borrow in unused lanes
    for t in range(L.ntables):
        j = 0 if L.fwd_pair[t] == L.npairs - 2 else 1
        L.band_fwd[j] |= (<uint64_t>(t * TABLE_SIZE)) << (16 * L.fwd_k[t])
        L.band_rot[j] += (<uint64_t>(t * TABLE_SIZE)) << (16 * L.rot_k[t])
    # phase: distance of the men to promotion; White's men start on rows half+1 .. size-1
    L.phase_total = 0
    for rr in range(half + 1, size):
        L.phase_total += 2 * half * rr
    for s in range(L.nsq):
        row = row_of(size, s)
        col = col_of(size, s)
        b = bit_of(size, s)
        L.row_of_bit[b] = <int8_t>row
        L.square_of_bit[b] = <int8_t>s
        for j in range(4):
            if (row >> j) & 1:
                L.dist_bits[j] |= (<uint64_t>1) << b
            if (col >> j) & 1:
                L.file_bits[j] |= (<uint64_t>1) << b
        if col < half:
            L.left |= (<uint64_t>1) << b
        if 1 <= row <= 3:
            L.runway[WHITE] |= (<uint64_t>1) << b
        if size - 4 <= row <= size - 2:
            L.runway[BLACK] |= (<uint64_t>1) << b
        if row + col == size - 1:
            L.long_diagonal |= (<uint64_t>1) << b
    fill_cones(r, L.cone)
    # edge strips (see EvalLayout): per pair, 3 digits for each strip
    L.edge_offset = (<uint64_t>13) | (<uint64_t>13) << 16
    left[0] = 0
    left[1] = half
    left[2] = half + 1
    right[0] = half - 2
    right[1] = half - 1
    right[2] = size - 1
    for v in range(1 << size):
        L.lut_edge[v] = (<uint64_t>base3_of(v, left, 3, 0)
                         | (<uint64_t>base3_of(v, right, 3, 0)) << 16)
        L.lut_edge_rev[v] = (<uint64_t>base3_of(v, right, 3, 1)
                             | (<uint64_t>base3_of(v, left, 3, 1)) << 16)
    L.men_back = r.men_back
    L.men_take_kings = r.men_take_kings
    L.broad_draws = 1 if size == 10 else 0
    L.f_material = 0
    L.f_trade = 4
    L.f_tempo = 6
    L.f_stm = 7
    L.f_balance = 8
    L.f_formation = 10
    L.f_runaway = 12
    L.f_king_mobility = 18
    L.f_king_square = 20
    j = L.f_king_square + L.nsq
    for t in range(L.ntables):
        L.f_pattern[t] = j
        j += TABLE_SIZE
    for t in range(EDGE_TABLES):
        L.f_edge[t] = j
        j += EDGE_SIZE
    L.nwide = nlanes
    for t in range(L.nwide):
        L.f_wide[t] = j
        j += WIDE_SIZE
    L.n_features = j
    # rounding the score: divide by phase_total * WEIGHT_SCALE with a multiply-high
    L.divisor = L.phase_total * WEIGHT_SCALE
    # magic = ceil(2^75 / D): 2^64 = D * q + r, so 2^75 / D = 2^11 q + 2^11 r / D
    mq = (<uint64_t>0xFFFFFFFFFFFFFFFF) // <uint64_t>L.divisor
    mr = (<uint64_t>0xFFFFFFFFFFFFFFFF) % <uint64_t>L.divisor + 1
    if mr == <uint64_t>L.divisor:
        mq += 1
        mr = 0
    L.magic = (mq << 11) + ((mr << 11) + <uint64_t>L.divisor - 1) // <uint64_t>L.divisor


cdef inline void emit(FeatureSink* s, int f, int c) noexcept nogil:
    if s.idx != NULL:
        if c != 0 and s.n < MAX_ENTRIES:
            s.idx[s.n] = f
            s.coef[s.n] = c
            s.n += 1
    else:
        s.mg += c * s.weights[2 * f]
        s.eg += c * s.weights[2 * f + 1]


cdef inline uint64_t step(const EvalLayout* L, uint64_t b, int d) noexcept nogil:
    if d < 2:
        return b >> L.shift[d]
    return b << L.shift[d]


cdef inline int king_mobility(const EvalLayout* L, uint64_t kings, uint64_t empty,
                              uint64_t denied, int* n_denied) noexcept nogil:
    """Empty squares the kings reach in one move (summed over the kings); n_denied gets how
    many of them are in ``denied``."""
    cdef int n = 0
    cdef int nd = 0
    cdef int d
    cdef uint64_t f
    for d in range(4):
        f = step(L, kings, d) & empty
        n += pc(f)
        nd += pc(f & denied)
        if L.flying:
            while f:
                f = step(L, f, d) & empty
                n += pc(f)
                nd += pc(f & denied)
    n_denied[0] = nd
    return n


cdef inline uint64_t capture_squares(const EvalLayout* L, uint64_t men, uint64_t empty,
                                     int colour) noexcept nogil:
    """Squares on which these men (of ``colour``) could capture a king: next to a man in a
    direction it captures in, with the square beyond empty (directions 0, 1 lead up the board,
    White's forward; 3 - d is the opposite of d)."""
    cdef uint64_t out = 0
    cdef int d
    if not L.men_take_kings:
        return 0
    for d in range(4):
        if L.men_back or (d < 2) == (colour == WHITE):
            out |= step(L, men, d) & step(L, empty, 3 - d)
    return out


cdef inline uint64_t lanes(const EvalLayout* L, const uint64_t* lut, uint64_t offset,
                           uint64_t plus, uint64_t minus, int q) noexcept nogil:
    """Row pair q as 16-bit lanes: per lane, offset + (the digits ``lut`` gives the men of
    ``plus``) - (those of ``minus``). With lut_fwd, lane_offset, White then Black: lane k holds
    the base-3 number (digit 2 white man, 1 empty or king, 0 black man) of the pair's 4
    squares on columns 2k..2k+3."""
    cdef int sh = q * (L.size + 1)
    return (offset - lut[(minus >> sh) & L.pair_mask]) + lut[(plus >> sh) & L.pair_mask]


cdef inline int lane_of(uint64_t packed, int k) noexcept nogil:
    return <int>((packed >> (16 * k)) & 0xFFFF)


cdef inline void read_window(FeatureSink* s, int base, uint64_t packed, int k,
                             int sign) noexcept nogil:
    emit(s, base + lane_of(packed, k), sign)


cdef inline void patterns(const EvalLayout* L, uint64_t wm, uint64_t bm,
                          FeatureSink* s) noexcept nogil:
    """Every window of a band at once: lane k of (low pair + 81 x high pair + offsets) is the
    table entry of the window at column offset k. The outer band is the row pairs
    npairs-2, npairs-1 (turned: 0, 1), the inner band npairs-3, npairs-2 (turned: 1, 2).

    10x10: outer tables 0-3 (rows 6-9), inner tables 4-7 (rows 4-7). 8x8: outer tables 0-2
    (rows 4-7); the inner band (rows 2-5) turns onto itself: table 3 at offset 0 (turned:
    offset 2) and table 4 at offset 1 (turned: 1)."""
    cdef const uint64_t* fwd = L.lut_fwd
    cdef const uint64_t* rev = L.lut_rev
    cdef int top = L.npairs - 1
    cdef uint64_t o = L.lane_offset
    cdef uint64_t outer = (lanes(L, fwd, o, wm, bm, top - 1) + 81 * lanes(L, fwd, o, wm, bm, top)
                           + L.band_fwd[0])
    cdef uint64_t inner = (lanes(L, fwd, o, wm, bm, top - 2) + 81 * lanes(L, fwd, o, wm, bm, top - 1)
                           + L.band_fwd[1])
    cdef uint64_t outer_rot = L.band_rot[0] - (lanes(L, rev, o, wm, bm, 1)
                                               + 81 * lanes(L, rev, o, wm, bm, 0))
    cdef uint64_t inner_rot = L.band_rot[1] - (lanes(L, rev, o, wm, bm, 2)
                                               + 81 * lanes(L, rev, o, wm, bm, 1))
    cdef int base = L.f_pattern[0]
    cdef int k
    if L.size == 10:
        for k in range(4):
            read_window(s, base, outer, k, 1)
            read_window(s, base, inner, k, 1)
            read_window(s, base, outer_rot, k, -1)
            read_window(s, base, inner_rot, k, -1)
    else:
        for k in range(3):
            read_window(s, base, outer, k, 1)
            read_window(s, base, outer_rot, k, -1)
        read_window(s, base, inner, 0, 1)
        read_window(s, base, inner, 1, 1)
        read_window(s, base, inner_rot, 2, -1)
        read_window(s, base, inner_rot, 1, -1)


cdef inline void edges(const EvalLayout* L, uint64_t wm, uint64_t bm,
                       FeatureSink* s) noexcept nogil:
    """The two edge tables: the left and right strips of White's half (the top three row
    pairs; lanes 0 and 1 of ``top``), each also read turned: the opposite strip of Black's
    side (the bottom three pairs), digits in reverse order and colours swapped (``turned``).
    Three pairs of digits 0..26 give 0 .. 3^9-1, EDGE_CENTRE for a strip without men."""
    cdef const uint64_t* fwd = L.lut_edge
    cdef const uint64_t* rev = L.lut_edge_rev
    cdef int t = L.npairs - 3
    cdef uint64_t o = L.edge_offset
    cdef uint64_t top = (lanes(L, fwd, o, wm, bm, t) + 27 * lanes(L, fwd, o, wm, bm, t + 1)
                         + 729 * lanes(L, fwd, o, wm, bm, t + 2))
    cdef uint64_t turned = (729 * lanes(L, rev, o, bm, wm, 0) + 27 * lanes(L, rev, o, bm, wm, 1)
                            + lanes(L, rev, o, bm, wm, 2))
    emit(s, L.f_edge[0] + lane_of(top, 0), 1)
    emit(s, L.f_edge[0] + lane_of(turned, 0), -1)
    emit(s, L.f_edge[1] + lane_of(top, 1), 1)
    emit(s, L.f_edge[1] + lane_of(turned, 1), -1)


cdef inline void wide(const EvalLayout* L, uint64_t wm, uint64_t bm,
                      FeatureSink* s) noexcept nogil:
    """The wide tables: the window of table k covers the top three row pairs (White's six
    rows) at column offset 2k, its digits those of the three pairs' lane k (the lowest pair
    least significant). Turned: the bottom three pairs, read with the digits reversed and the
    colours swapped, at lane nwide-1-k for table k. Lanes hold 0..80, so a lane of two pairs
    (< 3^8) still fits 16 bits and the third pair is added per window."""
    cdef const uint64_t* fwd = L.lut_fwd
    cdef const uint64_t* rev = L.lut_rev
    cdef int top = L.npairs - 1
    cdef uint64_t o = L.lane_offset
    cdef uint64_t low = lanes(L, fwd, o, wm, bm, top - 2) + 81 * lanes(L, fwd, o, wm, bm, top - 1)
    cdef uint64_t high = lanes(L, fwd, o, wm, bm, top)
    cdef uint64_t low_rot = lanes(L, rev, o, wm, bm, 2) + 81 * lanes(L, rev, o, wm, bm, 1)
    cdef uint64_t high_rot = lanes(L, rev, o, wm, bm, 0)
    cdef int k
    cdef int n = L.nwide
    for k in range(n):
        emit(s, L.f_wide[k] + lane_of(low, k) + 6561 * lane_of(high, k), 1)
        emit(s, L.f_wide[n - 1 - k] + (WIDE_SIZE - 1)
             - (lane_of(low_rot, k) + 6561 * lane_of(high_rot, k)), -1)


cdef inline void drawish_lone_king(const EvalLayout* L, FeatureSink* s, uint64_t lone,
                                   int n_other) noexcept nogil:
    """International: on the long diagonal, or against two pieces, the lone king draws."""
    if (lone & L.long_diagonal) or n_other <= 2:
        s.draw_divisor = 32
        s.draw_shift = 5
    else:
        s.draw_divisor = 2
        s.draw_shift = 1


cdef inline void broad_draw(FeatureSink* s, int pieces_ahead, bint level_kings) noexcept nogil:
    """The side ahead (or level) against a king: with at most 3 pieces /8, else with as many
    kings and men within one /2 (the larger scaling of the two sides when level)."""
    if pieces_ahead <= 3:
        s.draw_divisor = 8
        s.draw_shift = 3
    elif level_kings and s.draw_shift < 1:
        s.draw_divisor = 2
        s.draw_shift = 1


cdef inline void collect_features(const EvalLayout* L, const Pos* p, const int16_t* weights,
                                  int32_t* idx, int32_t* coef, int reads,
                                  FeatureSink* out) noexcept nogil:
    """Sum the weights of the position's features (idx NULL) or list them in idx/coef. The
    edge and wide tables are read only when ``reads`` says so (READ_EDGES, READ_WIDE): a file
    whose weights of those tables are all zero (one upgraded from an earlier layout, or fitted
    without them) pays nothing for them."""
    # a local sink, built here: its fields stay in registers (no aliasing with the weights)
    cdef FeatureSink local
    cdef FeatureSink* s = &local
    cdef uint64_t w = p.pieces[WHITE]
    cdef uint64_t b = p.pieces[BLACK]
    cdef uint64_t k = p.kings
    cdef uint64_t wm = w & ~k
    cdef uint64_t bm = b & ~k
    cdef uint64_t wk = w & k
    cdef uint64_t bk = b & k
    cdef uint64_t empty, wblk, bblk, cand
    cdef int size = L.size
    cdef int j, sq, d, ahead, nd_w, nd_b, mob
    cdef int nwm, nbm, nwk, nbk, nw, nb, dw, rb, db, phase, fw, fb
    cdef int run[6]
    local.weights = weights
    local.mg = 0
    local.eg = 0
    local.n = 0
    local.idx = idx
    local.coef = coef

    # patterns: base-3 lanes of every row pair, then one table read per window
    patterns(L, wm, bm, s)
    if reads & READ_EDGES:
        edges(L, wm, bm, s)
    if reads & READ_WIDE:
        wide(L, wm, bm, s)

    # material and trade
    nwm = pc(wm)
    nbm = pc(bm)
    nwk = pc(wk)
    nbk = pc(bk)
    nw = nwm + nwk
    nb = nbm + nbk
    emit(s, L.f_material, nwm - nbm)
    if nwk or nbk:
        emit(s, L.f_material + 1, (nwk >= 1) - (nbk >= 1))
        emit(s, L.f_material + 2, (nwk >= 2) - (nbk >= 2))
        emit(s, L.f_material + 3, (nwk - 2 if nwk > 2 else 0) - (nbk - 2 if nbk > 2 else 0))
    ahead = (nwm - nbm) + 3 * (nwk - nbk)
    if ahead:
        d = 1 if ahead > 0 else -1
        emit(s, L.f_trade, d)
        emit(s, L.f_trade + 1, d * (L.start_pieces - nw - nb))

    # phase and tempo: distance of the men to their crowning row
    dw = 0
    rb = 0
    for j in range(4):
        dw += pc(wm & L.dist_bits[j]) << j
        rb += pc(bm & L.dist_bits[j]) << j
    db = (size - 1) * nbm - rb
    phase = dw + db
    if phase > L.phase_total:
        phase = L.phase_total
    s.phase = phase
    emit(s, L.f_tempo, (size - 1) * (nwm - nbm) - dw + db)
    emit(s, L.f_stm, 1 if p.side == WHITE else -1)

    # balance: men on the left against the right, and their skew over the files
    fw = 0
    fb = 0
    for j in range(4):
        fw += pc(wm & L.file_bits[j]) << j
        fb += pc(bm & L.file_bits[j]) << j
    emit(s, L.f_balance, iabs(2 * pc(wm & L.left) - nwm) - iabs(2 * pc(bm & L.left) - nbm))
    emit(s, L.f_balance + 1, iabs(2 * fw - (size - 1) * nwm) - iabs(2 * fb - (size - 1) * nbm))

    # formation: men with no free square ahead, and those of them held by an opponent piece
    empty = L.valid & ~(w | b)
    wblk = wm & ~((empty << L.shift[0]) | (empty << L.shift[1]))
    bblk = bm & ~((empty >> L.shift[2]) | (empty >> L.shift[3]))
    emit(s, L.f_formation, pc(wblk) - pc(bblk))
    emit(s, L.f_formation + 1,
         pc(wblk & ((b << L.shift[0]) | (b << L.shift[1])))
         - pc(bblk & ((w >> L.shift[2]) | (w >> L.shift[3]))))

    # runaway men: close to crowning with no opponent piece in the cone ahead
    cand = (wm & L.runway[WHITE]) | (bm & L.runway[BLACK])
    if cand:
        for j in range(6):
            run[j] = 0
        while cand:
            sq = lsb(cand)
            cand &= cand - 1
            if (wm >> sq) & 1:
                if not (L.cone[WHITE][sq] & b):
                    run[L.row_of_bit[sq] - 1 + (3 if bk else 0)] += 1
            elif not (L.cone[BLACK][sq] & w):
                run[size - 2 - L.row_of_bit[sq] + (3 if wk else 0)] -= 1
        for j in range(6):
            if run[j]:
                emit(s, L.f_runaway + j, run[j])

    # kings: mobility and squares (Black's squares turned to its own side of the board)
    if wk or bk:
        mob = (king_mobility(L, wk, empty, capture_squares(L, bm, empty, BLACK), &nd_w)
               - king_mobility(L, bk, empty, capture_squares(L, wm, empty, WHITE), &nd_b))
        emit(s, L.f_king_mobility, mob)
        emit(s, L.f_king_mobility + 1, nd_w - nd_b)
        cand = wk
        while cand:
            sq = lsb(cand)
            cand &= cand - 1
            emit(s, L.f_king_square + L.square_of_bit[sq], 1)
        cand = bk
        while cand:
            sq = lsb(cand)
            cand &= cand - 1
            emit(s, L.f_king_square + L.nsq - 1 - L.square_of_bit[sq], -1)

    # drawish material (the known draws of the hand-written evaluation, for either colour)
    s.draw_divisor = 1
    s.draw_shift = 0
    if nw == 1 and nb == 1 and wk and bk:
        s.draw_divisor = 16
        s.draw_shift = 4
    elif L.lone_king_draw:
        # a lone king against at most three pieces, one of them a king
        if nw == 1 and wk and bk and nb <= 3:
            drawish_lone_king(L, s, w, nb)
        elif nb == 1 and bk and wk and nw <= 3:
            drawish_lone_king(L, s, b, nw)
    elif L.flying and size == 8:
        # a lone flying king against at most two pieces
        if (nw == 1 and wk and nb <= 2) or (nb == 1 and bk and nw <= 2):
            s.draw_divisor = 16
            s.draw_shift = 4
    if L.broad_draws and s.draw_shift == 0 and (wk or bk):
        if ahead >= 0 and bk:
            broad_draw(s, nw, nwk == nbk and iabs(nwm - nbm) <= 1)
        if ahead <= 0 and wk:
            broad_draw(s, nb, nwk == nbk and iabs(nwm - nbm) <= 1)
    out[0] = local


cdef void collect(const EvalLayout* L, const Pos* p, int32_t* idx, int32_t* coef,
                  FeatureSink* out) noexcept nogil:
    """List the position's feature entries (at most MAX_ENTRIES) in idx and coef."""
    collect_features(L, p, NULL, idx, coef, READ_EDGES | READ_WIDE, out)


cdef inline int round_div(const EvalLayout* L, int64_t x, int shift) noexcept nogil:
    """x / (L.divisor << shift) rounded half away from zero: odd, so mirrored positions agree.

    Without a division instruction: floor(y / (D << s)) = floor((y >> s) / D), and the
    quotient by D is a multiply-high with the magic number ceil(2^75 / D), exact for
    y < 2^62 (here |x| < 2^41)."""
    cdef uint64_t y
    cdef int64_t q
    if x >= 0:
        y = <uint64_t>x
    else:
        y = <uint64_t>(-x)
    y = (y + ((<uint64_t>L.divisor << shift) >> 1)) >> shift
    q = <int64_t>(damka_mulhi(y, L.magic) >> 11)
    return <int>(q if x >= 0 else -q)


cdef int learned_evaluate(const LearnedEval* e, const Pos* p) noexcept nogil:
    """Hundredths of a man from the side to move's point of view."""
    cdef FeatureSink sink
    cdef const EvalLayout* L = &e.layout
    cdef int64_t x
    cdef int v
    collect_features(L, p, e.weights, NULL, NULL, e.reads, &sink)
    x = (<int64_t>sink.mg) * sink.phase + (<int64_t>sink.eg) * (L.phase_total - sink.phase)
    v = round_div(L, x, sink.draw_shift)
    return v if p.side == WHITE else -v


# ---------------------------------------------------------------------------------------
# Python interface (engine/evaluation.py): masks use the engine's squares (bit s = square s)

cdef inline uint64_t to_ghost(const EvalLayout* L, uint64_t x) noexcept nogil:
    cdef uint64_t g = 0
    cdef int q
    for q in range(L.npairs):
        g |= ((x >> (q * L.size)) & L.pair_mask) << (q * (L.size + 1))
    return g


cdef inline int load_row(const EvalLayout* L, Pos* p, uint64_t w, uint64_t b, uint64_t k,
                         uint8_t white_to_move) noexcept nogil:
    """Fill p from engine masks; 0 when the masks do not make a position."""
    if (w & b) or (k & ~(w | b)) or ((w | b) >> L.nsq):
        return 0
    p.pieces[WHITE] = to_ghost(L, w)
    p.pieces[BLACK] = to_ghost(L, b)
    p.kings = to_ghost(L, k)
    p.side = WHITE if white_to_move else BLACK
    return 1


cdef inline bint any_nonzero(const int16_t* w, Py_ssize_t start, Py_ssize_t stop) noexcept nogil:
    cdef Py_ssize_t i
    for i in range(start, stop):
        if w[i]:
            return 1
    return 0


cdef inline int row_entries(int n, int phase, int total) noexcept nogil:
    return n * ((1 if phase > 0 else 0) + (1 if phase < total else 0))


def window_squares(int half, int pair, int k, int n):
    """The squares of a window of n digits from row pair ``pair`` at lane k, in digit order:
    two squares a row (positions k and k+1 of rows 2 pair, 2 pair + 1, ...)."""
    return tuple((2 * pair + i // 2) * half + k + i % 2 for i in range(n))


cdef class EvalCore:
    """The feature layout of one rule set and, once set, its weights (int16, 1/16 hundredth).

    Read-only after set_weights: many searchers may share one instance.
    """

    def __cinit__(self):
        self.e.weights = NULL
        self.e.reads = READ_EDGES | READ_WIDE

    def __dealloc__(self):
        free(self.e.weights)
        self.e.weights = NULL

    def __init__(self, CoreRules rules):
        init_layout(&self.e.layout, &rules.rules)
        self.size = rules.size
        self._rules = rules

    @property
    def n_features(self):
        return self.e.layout.n_features

    @property
    def n_params(self):
        return 2 * self.e.layout.n_features

    @property
    def has_weights(self):
        return self.e.weights != NULL

    def info(self):
        """The layout as plain data: groups of features, pattern windows, phase, scale."""
        cdef EvalLayout* L = &self.e.layout
        cdef int t
        groups = [(name, len(names)) for name, names in SCALAR_GROUPS]
        groups.append(("king_square", L.nsq))
        windows = []
        rotated = []
        for t in range(L.ntables):
            groups.append((f"pattern:{t}", TABLE_SIZE))
            windows.append(window_squares(L.half, L.fwd_pair[t], L.fwd_k[t], 8))
            rotated.append(window_squares(L.half, L.rot_pair[t], L.rot_k[t], 8))
        edge_windows = []
        for t in range(EDGE_TABLES):
            groups.append((f"edge:{t}", EDGE_SIZE))
        for strip in ((0, L.half, L.half + 1), (L.half - 2, L.half - 1, L.size - 1)):
            edge_windows.append(tuple(p * L.size + i for p in range(L.npairs - 3, L.npairs)
                                      for i in strip))
        wide_windows = []
        for t in range(L.nwide):
            groups.append((f"wide:{t}", WIDE_SIZE))
            wide_windows.append(window_squares(L.half, L.npairs - 3, t, 12))
        assert sum(n for _name, n in groups) == L.n_features
        return {
            "version": LAYOUT_VERSION,
            "size": L.size,
            "scale": WEIGHT_SCALE,
            "phase_total": L.phase_total,
            "groups": groups,
            "feature_names": {name: names for name, names in SCALAR_GROUPS},
            "windows": windows,
            "rotated_windows": rotated,
            "edge_windows": edge_windows,
            "rotated_edge_windows": [tuple(L.nsq - 1 - q for q in w) for w in edge_windows],
            "wide_windows": wide_windows,
            "rotated_wide_windows": [tuple(L.nsq - 1 - q for q in w) for w in wide_windows],
        }

    def set_weights(self, const int16_t[::1] params):
        """Install the weights: n_params int16 (middlegame, endgame per feature), or fewer,
        the rest zero (a weights file leaves its trailing zeros out: the wide tables' 9 MB
        are then zero pages never touched, nor read while their weights are all zero)."""
        cdef int16_t* buf
        cdef Py_ssize_t given = params.shape[0]
        if given > self.n_params:
            raise ValueError(f"expected {self.n_params} parameters, got {given}")
        buf = <int16_t*>calloc(self.n_params, sizeof(int16_t))
        if buf == NULL:
            raise MemoryError()
        if given:
            memcpy(buf, &params[0], given * sizeof(int16_t))
        free(self.e.weights)
        self.e.weights = buf
        self.e.reads = 0
        if any_nonzero(buf, 2 * self.e.layout.f_edge[0],
                       min(given, 2 * (self.e.layout.f_edge[0] + EDGE_TABLES * EDGE_SIZE))):
            self.e.reads |= READ_EDGES
        if any_nonzero(buf, 2 * self.e.layout.f_wide[0], given):  # (the last groups)
            self.e.reads |= READ_WIDE

    @property
    def reads_edges(self):
        """Whether the evaluation reads the edge tables (some edge weight is non-zero)."""
        return bool(self.e.reads & READ_EDGES)

    @property
    def reads_wide(self):
        """Whether the evaluation reads the wide tables (some weight of theirs is non-zero)."""
        return bool(self.e.reads & READ_WIDE)

    def evaluate(self, white, black, kings, bint white_to_move):
        """The score of one position (hundredths of a man, side to move's view)."""
        cdef Pos p
        if self.e.weights == NULL:
            raise ValueError("no weights loaded")
        (<CoreRules>self._rules).load(&p, white, black, kings, white_to_move)
        return learned_evaluate(&self.e, &p)

    def evaluate_rows(self, const uint64_t[::1] white, const uint64_t[::1] black,
                      const uint64_t[::1] kings, const uint8_t[::1] white_to_move,
                      int32_t[::1] out):
        """The scores of N positions (engine masks) into out, side to move's view."""
        cdef Py_ssize_t n = white.shape[0]
        cdef Py_ssize_t i, bad = -1
        cdef Pos p
        cdef const EvalLayout* L = &self.e.layout
        if self.e.weights == NULL:
            raise ValueError("no weights loaded")
        if black.shape[0] != n or kings.shape[0] != n or white_to_move.shape[0] != n \
                or out.shape[0] != n:
            raise ValueError("the arrays differ in length")
        with nogil:
            for i in range(n):
                if not load_row(L, &p, white[i], black[i], kings[i], white_to_move[i]):
                    bad = i
                    break
                out[i] = learned_evaluate(&self.e, &p)
        if bad >= 0:
            raise ValueError(f"row {bad} is not a position: pieces overlap, a king mask "
                             f"square holds no piece, or a square is off the board")

    def features(self, white, black, kings, bint white_to_move):
        """(entries, phase, draw_divisor): entries are (feature, coefficient) pairs, White's
        view, in the order the evaluation reads them (features may repeat)."""
        cdef Pos p
        cdef FeatureSink sink
        cdef int32_t idx[MAX_ENTRIES]
        cdef int32_t coef[MAX_ENTRIES]
        (<CoreRules>self._rules).load(&p, white, black, kings, white_to_move)
        collect(&self.e.layout, &p, idx, coef, &sink)
        return ([(idx[i], coef[i]) for i in range(sink.n)], sink.phase, sink.draw_divisor)

    def count_rows(self, const uint64_t[::1] white, const uint64_t[::1] black,
                   const uint64_t[::1] kings, const uint8_t[::1] white_to_move,
                   int64_t[::1] indptr):
        """First pass of feature_rows: indptr[i+1] - indptr[i] = entries of position i.
        Raises ValueError naming the first row whose masks are not a position."""
        cdef Py_ssize_t n = white.shape[0]
        cdef Py_ssize_t i, bad = -1
        cdef Pos p
        cdef FeatureSink sink
        cdef int32_t idx[MAX_ENTRIES]
        cdef int32_t coef[MAX_ENTRIES]
        cdef const EvalLayout* L = &self.e.layout
        if black.shape[0] != n or kings.shape[0] != n or white_to_move.shape[0] != n \
                or indptr.shape[0] != n + 1:
            raise ValueError("the arrays differ in length")
        with nogil:
            indptr[0] = 0
            for i in range(n):
                if not load_row(L, &p, white[i], black[i], kings[i], white_to_move[i]):
                    bad = i
                    break
                collect(L, &p, idx, coef, &sink)
                indptr[i + 1] = indptr[i] + row_entries(sink.n, sink.phase, L.phase_total)
        if bad >= 0:
            raise ValueError(f"row {bad} is not a position: pieces overlap, a king mask "
                             f"square holds no piece, or a square is off the board")

    def fill_rows(self, const uint64_t[::1] white, const uint64_t[::1] black,
                  const uint64_t[::1] kings, const uint8_t[::1] white_to_move,
                  const int64_t[::1] indptr, int32_t[::1] indices, floating[::1] values):
        """Second pass: the parameter indices and values of every row (side to move's view,
        phase blend and draw scale folded in)."""
        cdef Py_ssize_t n = white.shape[0]
        cdef Py_ssize_t i, pos
        cdef int j, f, c
        cdef double total, mg_part, eg_part, sign
        cdef Pos p
        cdef FeatureSink sink
        cdef int32_t idx[MAX_ENTRIES]
        cdef int32_t coef[MAX_ENTRIES]
        cdef const EvalLayout* L = &self.e.layout
        if indptr.shape[0] != n + 1 or indices.shape[0] != indptr[n] \
                or values.shape[0] != indptr[n]:
            raise ValueError("indptr, indices and values do not match (call count_rows first)")
        with nogil:
            for i in range(n):
                load_row(L, &p, white[i], black[i], kings[i], white_to_move[i])
                collect(L, &p, idx, coef, &sink)
                total = <double>L.phase_total * sink.draw_divisor
                sign = 1.0 if p.side == WHITE else -1.0
                mg_part = sign * sink.phase / total
                eg_part = sign * (L.phase_total - sink.phase) / total
                pos = indptr[i]
                for j in range(sink.n):
                    f = idx[j]
                    c = coef[j]
                    if sink.phase > 0:
                        indices[pos] = 2 * f
                        values[pos] = <floating>(c * mg_part)
                        pos += 1
                    if sink.phase < L.phase_total:
                        indices[pos] = 2 * f + 1
                        values[pos] = <floating>(c * eg_part)
                        pos += 1
