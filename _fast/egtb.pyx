# cython: language_level=3
"""Endgame databases: indexing of material slices, the nogil solver and the verify pass.

The rules are the move generator's (``_fast.movegen``): the solver only calls ``generate``
and ``make_move`` for its verdicts. It is a forward-iteration solver: a pass walks the
positions still unresolved, generates their moves and looks the successors up, until a pass
changes nothing. After the first pass it looks only at the positions that a move taken back
from a position resolved in the pass before leads to (``_mark_range``): the others would get
the verdict they had.

Normalisation: a table holds positions with White to move. A position with Black to move
is turned 180 degrees and its colours swapped (the rules are symmetric under that), so the
side to move is stored once per material signature (wm, wk, bm, bk) of the mover (w) and
the opponent (b).

Index of a slice (mixed radix, men outermost): white men over the squares outside White's
crowning row, black men over the squares outside Black's crowning row (indexed
independently, "with gaps": overlapping men are invalid entries), then white kings over the
squares no man holds, then black kings over the squares still free.

Values (one byte): 0 draw, 1..127 a win in that many plies, 128 + d a loss in d plies
(d <= 126), 255 an invalid entry. A ply count is the distance to the next conversion (a capture or a crowning)
with the winner hurrying and the loser delaying, or to the end of the game.
"""

from libc.stdint cimport uint64_t, uint32_t, uint16_t, uint8_t, int64_t
from libc.stdlib cimport malloc, calloc, free
from libc.string cimport memset, memmove

from _fast.movegen cimport (Rules, Pos, Move, MoveList, CoreRules, generate, make_move, MAX_MOVES,
                            WHITE, BLACK)
from _fast.egtb cimport Geometry, Dims, Lookup

from _fast.bits cimport popcount, lsb

cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <xmmintrin.h>
    #define damka_prefetch(p) _mm_prefetch((const char*)(p), _MM_HINT_T0)
    static inline unsigned long long damka_bswap64(unsigned long long x) { return _byteswap_uint64(x); }
    #else
    #define damka_prefetch(p) __builtin_prefetch((p))
    static inline unsigned long long damka_bswap64(unsigned long long x) { return __builtin_bswap64(x); }
    #endif
    static inline unsigned long long damka_reverse64(unsigned long long x) {
        x = damka_bswap64(x);
        x = ((x >> 4) & 0x0F0F0F0F0F0F0F0FULL) | ((x & 0x0F0F0F0F0F0F0F0FULL) << 4);
        x = ((x >> 2) & 0x3333333333333333ULL) | ((x & 0x3333333333333333ULL) << 2);
        x = ((x >> 1) & 0x5555555555555555ULL) | ((x & 0x5555555555555555ULL) << 1);
        return x;
    }
    """
    void prefetch "damka_prefetch"(const void* p) noexcept nogil
    uint64_t reverse64 "damka_reverse64"(uint64_t x) noexcept nogil

cdef enum:
    MAXN = 8            # counts per kind 0..7 in a signature
    NSIG = 4096         # MAXN ** 4
    INVALID = 255
    DRAW = 0
    LOSS0 = 128         # lost in 0 plies: no legal move
    MAX_WIN = 127       # longest win a byte holds
    MAX_LOSS = 126      # longest loss a byte holds

cdef uint64_t BINOM[65][9]


cdef void _init_binom() noexcept nogil:
    cdef int n, k
    for n in range(65):
        for k in range(9):
            if k == 0:
                BINOM[n][k] = 1
            elif n == 0:
                BINOM[n][k] = 0
            else:
                BINOM[n][k] = BINOM[n - 1][k - 1] + BINOM[n - 1][k]

_init_binom()

cdef enum:
    TOP_K = 4                    # combinations of up to this many squares are unranked by table
    TOP_N = 50                   # out of at most this many squares

# TOP[k][idx]: the largest c with BINOM[c][k] <= idx, for idx < BINOM[TOP_N][k] (k = 2..TOP_K)
cdef uint8_t* TOP[TOP_K + 1]


cdef int _init_top() except -1:
    cdef int k, c
    cdef uint64_t idx
    for k in range(TOP_K + 1):
        TOP[k] = NULL
    for k in range(2, TOP_K + 1):
        TOP[k] = <uint8_t*>malloc(BINOM[TOP_N][k])
        if TOP[k] == NULL:
            raise MemoryError()
        c = k - 1
        for idx in range(BINOM[TOP_N][k]):
            while BINOM[c + 1][k] <= idx:
                c += 1
            TOP[k][idx] = <uint8_t>c
    return 0

_init_top()


cdef void _init_geometry(Geometry* g, const Rules* r) noexcept nogil:
    cdef int s, b
    g.size = r.size
    g.nsq = r.nsq
    g.half = r.half
    for b in range(64):
        g.sq_of[b] = -1
        g.flip[b] = -1
    for s in range(r.nsq):
        b = s + s // r.size
        g.bit_of[s] = b
        g.sq_of[b] = s
    g.valid = 0
    for s in range(r.nsq):
        g.flip[g.bit_of[s]] = g.bit_of[r.nsq - 1 - s]
        g.valid |= (<uint64_t>1) << g.bit_of[s]
    g.top = g.bit_of[r.nsq - 1]


cdef int _flip_is_reversal(const Geometry* g) noexcept nogil:
    """Whether turning the board maps every real bit b to top - b (true of the ghost-square
    layout of both board sizes), which lets ``_flip_bits`` reverse the word."""
    cdef int s, b
    for s in range(g.nsq):
        b = g.bit_of[s]
        if g.flip[b] != g.top - b:
            return 0
    return 1


cdef inline int sig_id(int wm, int wk, int bm, int bk) noexcept nogil:
    return ((wm * MAXN + wk) * MAXN + bm) * MAXN + bk


cdef void _dims(const Geometry* g, int wm, int wk, int bm, int bk, Dims* d) noexcept nogil:
    cdef int men_sq = g.nsq - g.half
    d.nwm = BINOM[men_sq][wm]
    d.nbm = BINOM[men_sq][bm]
    d.nwk = BINOM[g.nsq - wm - bm][wk]
    d.nbk = BINOM[g.nsq - wm - bm - wk][bk]
    d.total = d.nwm * d.nbm * d.nwk * d.nbk


cdef inline uint64_t _rank_set(uint64_t bits, uint64_t below_mask_src, const Geometry* g,
                               int offset) noexcept nogil:
    """Combination rank of the squares in ``bits`` (ascending), each square's rank being its
    square number minus ``offset`` minus the pieces of ``below_mask_src`` below it."""
    cdef uint64_t idx = 0
    cdef int i = 1
    cdef int b, rank
    while bits:
        b = lsb(bits)
        bits &= bits - 1
        rank = g.sq_of[b] - offset
        if below_mask_src:
            rank -= popcount(below_mask_src & (((<uint64_t>1) << b) - 1))
        idx += BINOM[rank][i]
        i += 1
    return idx


cdef inline uint64_t index_of(const Geometry* g, const Pos* p, int wm, int wk, int bm, int bk,
                              const Dims* d) noexcept nogil:
    """Index of a White-to-move position inside its slice."""
    cdef uint64_t wmen = p.pieces[WHITE] & ~p.kings
    cdef uint64_t bmen = p.pieces[BLACK] & ~p.kings
    cdef uint64_t wkings = p.pieces[WHITE] & p.kings
    cdef uint64_t bkings = p.pieces[BLACK] & p.kings
    cdef uint64_t men = wmen | bmen
    cdef uint64_t iwm = _rank_set(wmen, 0, g, g.half)
    cdef uint64_t ibm = _rank_set(bmen, 0, g, 0)
    cdef uint64_t iwk = _rank_set(wkings, men, g, 0)
    cdef uint64_t ibk = _rank_set(bkings, men | wkings, g, 0)
    return ((iwm * d.nbm + ibm) * d.nwk + iwk) * d.nbk + ibk


cdef inline int _unrank(uint64_t idx, int k, int n, int* out) noexcept nogil:
    """The k ranks (ascending into out) of combination index idx of k out of n: each the
    largest c with BINOM[c][i] <= what is left of idx, found by bisection."""
    cdef int i, lo, hi, mid
    hi = n - 1
    for i in range(k, 0, -1):
        if i == 1:
            out[0] = <int>idx           # BINOM[c][1] == c
            return 0
        if i <= TOP_K and idx < BINOM[TOP_N][i]:
            lo = TOP[i][idx]
            out[i - 1] = lo
            idx -= BINOM[lo][i]
            hi = lo - 1
            continue
        lo = i - 1                      # BINOM[i - 1][i] == 0 <= idx
        while lo < hi:
            mid = (lo + hi + 1) >> 1
            if BINOM[mid][i] <= idx:
                lo = mid
            else:
                hi = mid - 1
        out[i - 1] = lo
        idx -= BINOM[lo][i]
        hi = lo - 1
    return 0


cdef inline uint64_t _place_free(const Geometry* g, uint64_t occupied, int* ranks,
                                 int k) noexcept nogil:
    """Bits of the squares whose ranks among the free squares are given (ascending); bits
    run in square order, so this walks the free bits from the lowest."""
    cdef uint64_t out = 0
    cdef uint64_t free = g.valid & ~occupied
    cdef uint64_t byte
    cdef int j, c, need, base = 0, r = 0
    for j in range(k):
        # drop the free squares below rank ranks[j]: whole bytes while the target is above
        # them, then one at a time
        need = ranks[j] - r
        while True:
            byte = free & ((<uint64_t>0xFF) << base)
            c = popcount(byte)
            if c > need:
                break
            need -= c
            free ^= byte
            base += 8
        while need > 0:
            free &= free - 1
            need -= 1
        r = ranks[j]
        out |= free & (~free + 1)
    return out


ctypedef struct Cursor:
    # what position_at decoded last: consecutive indices mostly share the men and the
    # white kings (the innermost digit is the black kings'), so those are decoded once
    uint64_t men_idx             # idx // (nwk * nbk); all ones: none yet
    uint64_t rest_idx            # idx // nbk; all ones: none yet
    uint64_t wmen, bmen, wkings
    int men_ok                   # the men do not overlap


cdef inline void cursor_reset(Cursor* c) noexcept nogil:
    c.men_idx = ~(<uint64_t>0)
    c.rest_idx = ~(<uint64_t>0)
    c.wmen = 0
    c.bmen = 0
    c.wkings = 0
    c.men_ok = 0


cdef inline int position_at(const Geometry* g, uint64_t idx, int wm, int wk, int bm, int bk,
                            const Dims* d, Cursor* c, Pos* p) noexcept nogil:
    """The White-to-move position of index idx; 0 when the index is invalid (men overlap).
    The cursor keeps the parts decoded for the index before."""
    cdef int ranks[8]
    cdef int i
    cdef int men_sq = g.nsq - g.half
    cdef uint64_t ibk = idx % d.nbk
    cdef uint64_t rest = idx // d.nbk
    cdef uint64_t men, wmen, bmen
    if rest != c.rest_idx:
        men = rest // d.nwk
        if men != c.men_idx:
            wmen = 0
            bmen = 0
            _unrank(men // d.nbm, wm, men_sq, ranks)
            for i in range(wm):
                wmen |= (<uint64_t>1) << g.bit_of[ranks[i] + g.half]
            _unrank(men % d.nbm, bm, men_sq, ranks)
            for i in range(bm):
                bmen |= (<uint64_t>1) << g.bit_of[ranks[i]]
            c.wmen = wmen
            c.bmen = bmen
            c.men_ok = (wmen & bmen) == 0
            c.men_idx = men
        if c.men_ok:
            _unrank(rest % d.nwk, wk, g.nsq - wm - bm, ranks)
            c.wkings = _place_free(g, c.wmen | c.bmen, ranks, wk)
        c.rest_idx = rest
    if not c.men_ok:
        return 0
    _unrank(ibk, bk, g.nsq - wm - bm - wk, ranks)
    cdef uint64_t bkings = _place_free(g, c.wmen | c.bmen | c.wkings, ranks, bk)
    p.pieces[WHITE] = c.wmen | c.wkings
    p.pieces[BLACK] = c.bmen | bkings
    p.kings = c.wkings | bkings
    p.side = WHITE
    return 1


cdef inline int position_of(const Geometry* g, uint64_t idx, int wm, int wk, int bm, int bk,
                            const Dims* d, Pos* p) noexcept nogil:
    """The White-to-move position of index idx; 0 when the index is invalid (men overlap)."""
    cdef Cursor c
    cursor_reset(&c)
    return position_at(g, idx, wm, wk, bm, bk, d, &c, p)


cdef inline uint64_t _flip_bits(const Geometry* g, uint64_t b) noexcept nogil:
    """The squares of b turned 180 degrees: bit x goes to top - x (see _flip_is_reversal)."""
    return reverse64(b) >> (63 - g.top)


cdef inline void normalise(const Geometry* g, const Pos* p, Pos* out) noexcept nogil:
    """The position with White to move: Black-to-move positions turned and recoloured."""
    if p.side == WHITE:
        out[0] = p[0]
        return
    out.pieces[WHITE] = _flip_bits(g, p.pieces[BLACK])
    out.pieces[BLACK] = _flip_bits(g, p.pieces[WHITE])
    out.kings = _flip_bits(g, p.kings)
    out.side = WHITE


cdef int lookup(const Lookup* lk, const Pos* child) noexcept nogil:
    """Value of a child position (any side to move) from the side to move's view; -1 when
    its table is missing."""
    cdef Pos n
    normalise(lk.g, child, &n)
    cdef uint64_t wk = n.pieces[WHITE] & n.kings
    cdef uint64_t bk = n.pieces[BLACK] & n.kings
    cdef int nwk = popcount(wk)
    cdef int nbk = popcount(bk)
    cdef int nwm = popcount(n.pieces[WHITE]) - nwk
    cdef int nbm = popcount(n.pieces[BLACK]) - nbk
    if nwm + nwk == 0:
        return LOSS0        # no pieces: lost, nothing left to play
    if nbm + nbk == 0:
        return 1            # cannot happen after a legal move; a won position
    if nwm >= MAXN or nwk >= MAXN or nbm >= MAXN or nbk >= MAXN:
        return -1
    cdef int s = sig_id(nwm, nwk, nbm, nbk)
    if lk.tables[s] == NULL:
        return -1
    return lk.tables[s][index_of(lk.g, &n, nwm, nwk, nbm, nbk, &lk.dims[s])]


cdef inline int is_win(int v) noexcept nogil:
    return 1 <= v <= MAX_WIN


cdef inline int is_loss(int v) noexcept nogil:
    return LOSS0 <= v < INVALID


cdef inline int plies(int v) noexcept nogil:
    return v if v < LOSS0 else v - LOSS0


cdef enum:
    KEEP = 256                   # pending: still unresolved, look again next pass
    SETTLED = 257                # pending: unresolved, and no pass can change that (a draw)


cdef int _evaluate(const Rules* r, const Lookup* lk, const Pos* p, const uint8_t* partner,
                   int pw, int pk, int qm, int qk, const Dims* pd, int k,
                   int* n_in) noexcept nogil:
    """Pass k's verdict for p: a value, or -2 unresolved (-3 missing table, -4 overflow).

    partner is the table of the in-slice successors (signature qm, qk, pw, pk once the turn
    passes); only its entries with a distance below k count, so that everything resolved in
    pass k has distance k (losses in 0, positions without moves, are set before pass 1).
    """
    cdef MoveList ml
    cdef Pos child, n
    cdef int i, v, d, j, nq = 0
    cdef int best_win = 100000
    cdef int worst_loss = -1
    cdef int all_known_wins = 1
    cdef uint64_t quiet[MAX_MOVES]
    n_in[0] = 0
    generate(r, p, &ml, NULL)
    if ml.count == 0:
        return LOSS0
    # the in-slice successors' entries first, each fetched from memory at once (the tables
    # are far larger than the caches, and waiting for them one by one was most of the time)
    for i in range(ml.count):
        if not (ml.moves[i].ncapt or ml.moves[i].promote):
            make_move(p, &ml.moves[i], &child)
            normalise(lk.g, &child, &n)
            quiet[nq] = index_of(lk.g, &n, qm, qk, pw, pk, pd)
            prefetch(&partner[quiet[nq]])
            nq += 1
    n_in[0] = nq
    j = 0
    for i in range(ml.count):
        if ml.moves[i].ncapt or ml.moves[i].promote:
            make_move(p, &ml.moves[i], &child)
            v = lookup(lk, &child)
            if v < 0 or v == INVALID:
                return -3
            d = 0
        else:
            v = partner[quiet[j]]
            j += 1
            if v == DRAW:
                all_known_wins = 0
                continue
            d = plies(v)
            if d >= k:
                all_known_wins = 0
                continue
        if is_loss(v):
            if d < best_win:
                best_win = d
        elif is_win(v):
            if d > worst_loss:
                worst_loss = d
        else:
            all_known_wins = 0
    if best_win < 100000:
        if best_win + 1 > MAX_WIN:
            return -4
        return best_win + 1
    if all_known_wins:
        if worst_loss + 1 > MAX_LOSS:
            return -4
        return LOSS0 + worst_loss + 1
    return -2


ctypedef struct Side:
    # one table of a colour pair while it is solved
    int wm, wk, bm, bk
    uint8_t* t                   # its values
    const uint8_t* partner       # the table its quiet moves lead to (t itself for a
                                 # slice that is its own partner)
    uint32_t* work               # the indices still unresolved
    uint16_t* pending            # a pass's verdicts, written after the pass
    uint64_t nwork
    uint8_t* due[2]              # due[k & 1][idx]: pass k must look at idx again (a
                                 # successor of it was resolved in pass k - 1)
    uint32_t* fresh              # the indices the last pass resolved, ascending
    uint64_t nfresh
    int look_all                 # every pass looks at every unresolved index (no marks)


cdef uint64_t _fill_range(const Rules* r, const Lookup* lk, Side* sd, uint64_t lo,
                          uint64_t hi, uint64_t* progress) noexcept nogil:
    """Entries lo..hi-1: mark the invalid ones and those without moves (lost in 0); list the
    rest, from work[lo] on (a part's own stretch). Returns how many it listed."""
    cdef const Dims* d = &lk.dims[sig_id(sd.wm, sd.wk, sd.bm, sd.bk)]
    cdef uint64_t idx, n = 0
    cdef Pos p
    cdef MoveList ml
    cdef Cursor c
    cursor_reset(&c)
    for idx in range(lo, hi):
        if not position_at(lk.g, idx, sd.wm, sd.wk, sd.bm, sd.bk, d, &c, &p):
            sd.t[idx] = INVALID
            continue
        generate(r, &p, &ml, NULL)
        progress[0] += 1
        if ml.count == 0:
            sd.t[idx] = LOSS0
            continue
        sd.t[idx] = DRAW
        sd.work[lo + n] = <uint32_t>idx
        n += 1
    return n


cdef int64_t _pass_range(const Rules* r, const Lookup* lk, Side* sd, int k, uint64_t lo,
                         uint64_t hi, uint64_t* progress, const uint64_t* stop,
                         int* error) noexcept nogil:
    """Pass k over work[lo..hi-1]: each verdict goes to pending (the table is written after
    the pass, so the pass reads only older values and its parts may run at once). Returns
    how many it resolved, or -1 with error set."""
    cdef const Dims* d = &lk.dims[sig_id(sd.wm, sd.wk, sd.bm, sd.bk)]
    cdef const Dims* pd = &lk.dims[sig_id(sd.bm, sd.bk, sd.wm, sd.wk)]
    cdef uint64_t i
    cdef int64_t changed = 0
    cdef int v, n_in
    cdef Pos p
    cdef Cursor c
    cdef uint8_t* due = sd.due[k & 1]
    cursor_reset(&c)
    for i in range(lo, hi):
        # pass 1 looks at everything; later passes only at what a resolved successor may
        # have changed (the verdict of the others is the one they had)
        if k > 1 and not sd.look_all:
            if not due[sd.work[i]]:
                sd.pending[i] = KEEP
                continue
            due[sd.work[i]] = 0
        position_at(lk.g, sd.work[i], sd.wm, sd.wk, sd.bm, sd.bk, d, &c, &p)
        v = _evaluate(r, lk, &p, sd.partner, sd.wm, sd.wk, sd.bm, sd.bk, pd, k, &n_in)
        progress[0] += 1
        if ((i - lo) & 4095) == 0 and stop[0]:
            error[0] = 4
            return -1
        if v == -3:
            error[0] = 1
            return -1
        if v == -4:
            error[0] = 2
            return -1
        if v >= 0:
            sd.pending[i] = <uint16_t>v
            changed += 1
        elif n_in == 0:
            sd.pending[i] = SETTLED  # every move leaves the slice and none wins or loses
        else:
            sd.pending[i] = KEEP
    return changed


cdef void _end_pass(Side* sd) noexcept nogil:
    """Write the pass's verdicts, list what it resolved and keep the still unresolved
    indices, in order."""
    cdef uint64_t i, keep = 0, nfresh = 0
    for i in range(sd.nwork):
        if sd.pending[i] < KEEP:
            sd.t[sd.work[i]] = <uint8_t>sd.pending[i]
            sd.fresh[nfresh] = sd.work[i]
            nfresh += 1
        elif sd.pending[i] == KEEP:
            sd.work[keep] = sd.work[i]
            keep += 1
    sd.nwork = keep
    sd.nfresh = nfresh


cdef void _mark_range(const Rules* r, const Lookup* lk, const Side* sd, Side* pred, int k,
                      uint64_t lo, uint64_t hi) noexcept nogil:
    """For the positions fresh[lo..hi-1] that pass k resolved: mark every position from
    which a quiet move may lead to them due in pass k + 1 (in the table ``pred``).

    The predecessors are found by taking back a move of the side that just moved: a man one
    step back (men move one step forward when they do not capture, in every rule set), a
    king any distance back along a free diagonal (one step where kings do not fly). The
    marks only choose what the next pass looks at; its verdicts still come from the move
    generator, and marking a position that is no predecessor costs a look and nothing else.
    """
    cdef const Dims* d = &lk.dims[sig_id(sd.wm, sd.wk, sd.bm, sd.bk)]
    cdef const Dims* pd = &lk.dims[sig_id(pred.wm, pred.wk, pred.bm, pred.bk)]
    cdef uint8_t* due = pred.due[(k + 1) & 1]
    cdef uint64_t i, movers, empty, from_bit, to_bit
    cdef Pos q, back, n
    cdef Cursor c
    cdef int b, a, dir, is_king
    cursor_reset(&c)
    for i in range(lo, hi):
        if not position_at(lk.g, sd.fresh[i], sd.wm, sd.wk, sd.bm, sd.bk, d, &c, &q):
            continue                # cannot happen: only valid entries are resolved
        # q has White to move: Black made the move into it
        empty = lk.g.valid & ~(q.pieces[WHITE] | q.pieces[BLACK])
        movers = q.pieces[BLACK]
        while movers:
            b = lsb(movers)
            movers &= movers - 1
            to_bit = (<uint64_t>1) << b
            is_king = (q.kings & to_bit) != 0
            # Black's men move down the board (directions 2 and 3), so they came from above
            for dir in range(4 if is_king else 2):
                a = r.nb[b][dir]
                while a >= 0 and (empty >> a) & 1:
                    from_bit = (<uint64_t>1) << a
                    back.pieces[WHITE] = q.pieces[WHITE]
                    back.pieces[BLACK] = (q.pieces[BLACK] & ~to_bit) | from_bit
                    back.kings = (q.kings & ~to_bit) | from_bit if is_king else q.kings
                    back.side = BLACK
                    normalise(lk.g, &back, &n)
                    due[index_of(lk.g, &n, pred.wm, pred.wk, pred.bm, pred.bk, pd)] = 1
                    if not (is_king and r.flying):
                        break
                    a = r.nb[a][dir]


cdef inline uint64_t _part_start(uint64_t n, int part, int parts) noexcept nogil:
    return n * <uint64_t>part // <uint64_t>parts


# ---------------------------------------------------------------------------------------
# Python interface


cdef class Solver:
    """The tables of one rule set in memory (numpy uint8 arrays by signature) and the C
    solver over them. Tables are registered with ``add``; ``solve`` fills a colour pair.
    The search probes the same tables through ``lk`` (see egtb.pxd)."""

    def __init__(self, CoreRules core):
        cdef int wm, wk, bm, bk
        self.rules = core.rules
        _init_geometry(&self.geo, &self.rules)
        if not _flip_is_reversal(&self.geo):
            raise RuntimeError(f"{self.geo.size}x{self.geo.size}: turning the board is not a "
                               "reversal of the bits")
        self._arrays = {}
        for wm in range(MAXN):
            for wk in range(MAXN):
                for bm in range(MAXN):
                    for bk in range(MAXN):
                        self.tables[sig_id(wm, wk, bm, bk)] = NULL
                        if wm + bm <= self.geo.nsq - self.geo.half and wm + bm + wk + bk <= self.geo.nsq:
                            _dims(&self.geo, wm, wk, bm, bk, &self.dims[sig_id(wm, wk, bm, bk)])
                        else:
                            memset(&self.dims[sig_id(wm, wk, bm, bk)], 0, sizeof(Dims))
        self.lk.g = &self.geo
        self.lk.tables = self.tables
        self.lk.dims = self.dims

    def slice_size(self, int wm, int wk, int bm, int bk) -> int:
        """Entries of a slice's index (invalid ones with overlapping men included)."""
        _check_sig(wm, wk, bm, bk)
        return self.dims[sig_id(wm, wk, bm, bk)].total

    def add(self, tuple sig, const uint8_t[::1] table):
        """Register a solved (or to-be-solved) table for signature (wm, wk, bm, bk)."""
        cdef int wm = sig[0], wk = sig[1], bm = sig[2], bk = sig[3]
        _check_sig(wm, wk, bm, bk)
        if <uint64_t>table.shape[0] != self.dims[sig_id(wm, wk, bm, bk)].total:
            raise ValueError(f"table for {sig} has {table.shape[0]} entries, expected "
                             f"{self.dims[sig_id(wm, wk, bm, bk)].total}")
        self._arrays[sig] = table
        self.tables[sig_id(wm, wk, bm, bk)] = <uint8_t*>&table[0] if table.shape[0] else NULL

    def has(self, tuple sig) -> bool:
        return sig in self._arrays

    def solve(self, tuple sig, uint8_t[::1] a, uint8_t[::1] b, uint64_t[::1] progress,
              int slot, int parts=1, pool=None, int min_part=65536, bint look_all=False):
        """Solve slice sig and its colour partner (b is a when the slice is its own partner);
        progress[slot] counts the positions examined, and a non-zero progress[len - 1] (the
        last entry, not a slot) stops the job with InterruptedError. Returns the number of
        passes.

        With ``parts`` > 1 and an executor ``pool``, every pass is split into that many
        stretches of at least ``min_part`` entries (below that a thread costs more than it
        gains), run on the pool at once (part p counts in progress[slot + p]); the result is
        the same as with one part.

        After the first pass only positions with a successor resolved in the pass before are
        looked at again (PairSolve.mark_part); ``look_all`` looks at every unresolved
        position in every pass instead, the same tables the slow way (for the tests)."""
        if not 0 <= slot or slot + max(parts, 1) > progress.shape[0] - 1:
            raise ValueError("progress needs a slot per part and a last entry for stop")
        job = PairSolve(self, sig, a, b, progress, look_all)
        if pool is None or parts < 1:
            parts = 1
        parts = max(1, min(parts, job.size() // max(min_part, 1)))

        def each(method, *args):
            if parts == 1:
                return [method(*args, 0, 1, slot)]
            futures = [pool.submit(method, *args, part, parts, slot + part)
                       for part in range(parts)]
            return [f.result() for f in futures]

        for side in range(job.sides()):
            job.fill_done(side, each(job.fill_part, side))
        k = 0
        while True:
            k += 1
            changed = 0
            for side in range(job.sides()):
                changed += sum(each(job.pass_part, side, k))
                if job.pass_done(side) and not look_all:
                    each(job.mark_part, side, k)
            if changed == 0:
                return k

    def verify(self, tuple sig, uint64_t[::1] progress, int slot):
        """Check every entry of a registered slice against its successors; returns the number
        of entries that disagree (and the first one's index, or -1)."""
        cdef int wm = sig[0], wk = sig[1], bm = sig[2], bk = sig[3]
        cdef uint64_t bad = 0
        cdef int64_t first = -1
        _check_sig(wm, wk, bm, bk)
        if self.tables[sig_id(wm, wk, bm, bk)] == NULL or self.tables[sig_id(bm, bk, wm, wk)] == NULL:
            raise ValueError(f"slice {sig} or its colour partner is not loaded")
        cdef uint64_t* slot_ptr = &progress[slot]
        with nogil:
            bad = _verify(&self.rules, &self.lk, wm, wk, bm, bk, &first, slot_ptr)
        return bad, first

    def pieces(self) -> int:
        """The largest piece count of any registered table (0 when none)."""
        return max((sum(sig) for sig in self._arrays), default=0)

    cdef uint64_t _bits(self, uint64_t squares) except? 0:
        cdef uint64_t out = 0
        cdef int s
        while squares:
            s = lsb(squares)
            squares &= squares - 1
            if s >= self.geo.nsq:
                raise ValueError(f"square {s} is off the board")
            out |= (<uint64_t>1) << self.geo.bit_of[s]
        return out

    cdef uint64_t _squares(self, uint64_t bits) noexcept:
        cdef uint64_t out = 0
        cdef int b
        while bits:
            b = lsb(bits)
            bits &= bits - 1
            out |= (<uint64_t>1) << self.geo.sq_of[b]
        return out

    cdef int _load(self, Pos* p, uint64_t white, uint64_t black, uint64_t kings,
                   bint white_to_move) except -1:
        p.pieces[WHITE] = self._bits(white)
        p.pieces[BLACK] = self._bits(black)
        p.kings = self._bits(kings)
        p.side = WHITE if white_to_move else BLACK
        return 0

    def index(self, uint64_t white, uint64_t black, uint64_t kings, bint white_to_move):
        """(signature, index) of a position (square masks) in its White-to-move slice;
        (None, 0) when a side has no pieces."""
        cdef Pos p, n
        self._load(&p, white, black, kings, white_to_move)
        normalise(&self.geo, &p, &n)
        cdef int nwk = popcount(n.pieces[WHITE] & n.kings)
        cdef int nbk = popcount(n.pieces[BLACK] & n.kings)
        cdef int nwm = popcount(n.pieces[WHITE]) - nwk
        cdef int nbm = popcount(n.pieces[BLACK]) - nbk
        if nwm + nwk == 0 or nbm + nbk == 0:
            return None, 0
        if max(nwm, nwk, nbm, nbk) >= MAXN:
            return (nwm, nwk, nbm, nbk), -1
        if (n.pieces[WHITE] & ~n.kings & self.rules.promo[WHITE]) or (
                n.pieces[BLACK] & ~n.kings & self.rules.promo[BLACK]):
            raise ValueError("a man stands on its own crowning row")
        return ((nwm, nwk, nbm, nbk),
                index_of(&self.geo, &n, nwm, nwk, nbm, nbk, &self.dims[sig_id(nwm, nwk, nbm, nbk)]))

    def position(self, tuple sig, uint64_t idx):
        """The White-to-move position (white, black, kings square masks) of an index, or None
        for an invalid entry."""
        cdef Pos p
        cdef int wm = sig[0], wk = sig[1], bm = sig[2], bk = sig[3]
        _check_sig(wm, wk, bm, bk)
        if idx >= self.dims[sig_id(wm, wk, bm, bk)].total:
            raise IndexError(idx)
        if not position_of(&self.geo, idx, wm, wk, bm, bk, &self.dims[sig_id(wm, wk, bm, bk)], &p):
            return None
        return (self._squares(p.pieces[WHITE]), self._squares(p.pieces[BLACK]),
                self._squares(p.kings))

    def probe(self, uint64_t white, uint64_t black, uint64_t kings, bint white_to_move):
        """Stored value byte of a position (square masks) from the tables registered here,
        or -1 when its table is not registered."""
        cdef Pos p
        self._load(&p, white, black, kings, white_to_move)
        return lookup(&self.lk, &p)


cdef uint64_t _verify(const Rules* r, const Lookup* lk, int wm, int wk, int bm, int bk,
                      int64_t* first, uint64_t* slot) noexcept nogil:
    """Entries whose value is not the one their successors give (a full pass with every
    successor's final value: a draw needs a drawn successor and no lost one)."""
    cdef int s = sig_id(wm, wk, bm, bk)
    cdef const Dims* d = &lk.dims[s]
    cdef uint8_t* t = lk.tables[s]
    cdef uint64_t idx, bad = 0
    cdef Pos p, child
    cdef MoveList ml
    cdef int i, v, stored, best_win, worst_loss, any_draw, dd
    cdef Cursor c
    cursor_reset(&c)
    for idx in range(d.total):
        slot[0] = idx + 1
        if not position_at(lk.g, idx, wm, wk, bm, bk, d, &c, &p):
            continue
        stored = t[idx]
        generate(r, &p, &ml, NULL)
        best_win = 100000
        worst_loss = -1
        any_draw = 0
        v = 0
        for i in range(ml.count):
            make_move(&p, &ml.moves[i], &child)
            v = lookup(lk, &child)
            if v < 0 or v == INVALID:
                any_draw = -1000
                break
            dd = 0 if (ml.moves[i].ncapt or ml.moves[i].promote) else plies(v)
            if v == DRAW:
                any_draw = 1
            elif is_loss(v):
                if dd < best_win:
                    best_win = dd
            elif dd > worst_loss:
                worst_loss = dd
        if any_draw < 0:
            v = -1
        elif ml.count == 0:
            v = LOSS0
        elif best_win < 100000:
            v = best_win + 1
        elif any_draw:
            v = DRAW
        else:
            v = LOSS0 + worst_loss + 1
        if v != stored:
            if first[0] < 0:
                first[0] = <int64_t>idx
            bad += 1
    return bad


def _check_sig(int wm, int wk, int bm, int bk):
    if min(wm, wk, bm, bk) < 0 or max(wm, wk, bm, bk) >= MAXN:
        raise ValueError(f"material ({wm}, {wk}, {bm}, {bk}) out of range 0..{MAXN - 1}")


def fill_invalid(uint8_t[::1] table):
    """Replace invalid entries by the value before them, so runs get longer (they are never
    probed); returns the number replaced."""
    cdef uint64_t i, n = 0
    cdef uint8_t last = DRAW
    with nogil:
        for i in range(<uint64_t>table.shape[0]):
            if table[i] == INVALID:
                table[i] = last
                n += 1
            else:
                last = table[i]
    return n


cdef class PairSolve:
    """A colour pair being solved (Solver.solve drives it): its work lists, passes split
    into parts that may run on several threads at once, each releasing the GIL."""
    cdef Solver solver
    cdef Side sd[2]
    cdef int nsides
    cdef uint64_t* progress
    cdef uint64_t* stop
    cdef object keep             # the arrays the pointers point into

    def __init__(self, Solver solver, tuple sig, uint8_t[::1] a, uint8_t[::1] b,
                 uint64_t[::1] progress, bint look_all=False):
        cdef int i
        cdef uint64_t n
        cdef int wm = sig[0], wk = sig[1], bm = sig[2], bk = sig[3]
        _check_sig(wm, wk, bm, bk)
        self.solver = solver
        self.keep = (a, b, progress)
        self.progress = &progress[0]
        self.stop = &progress[progress.shape[0] - 1]
        solver.add(sig, a)
        solver.add((bm, bk, wm, wk), b)
        self.nsides = 1 if &a[0] == &b[0] else 2
        for i in range(2):
            self.sd[i].work = NULL
            self.sd[i].pending = NULL
            self.sd[i].nwork = 0
            self.sd[i].due[0] = NULL
            self.sd[i].due[1] = NULL
            self.sd[i].fresh = NULL
            self.sd[i].nfresh = 0
            self.sd[i].look_all = look_all
        self.sd[0].wm = wm; self.sd[0].wk = wk; self.sd[0].bm = bm; self.sd[0].bk = bk
        self.sd[0].t = &a[0]
        self.sd[0].partner = &b[0]
        self.sd[1].wm = bm; self.sd[1].wk = bk; self.sd[1].bm = wm; self.sd[1].bk = wk
        self.sd[1].t = &b[0]
        self.sd[1].partner = &a[0]
        for i in range(self.nsides):
            n = self._total(i)
            self.sd[i].work = <uint32_t*>malloc(n * sizeof(uint32_t) + 4)
            self.sd[i].pending = <uint16_t*>malloc(n * sizeof(uint16_t) + 2)
            self.sd[i].fresh = <uint32_t*>malloc(n * sizeof(uint32_t) + 4)
            self.sd[i].due[0] = <uint8_t*>calloc(n + 1, 1)
            self.sd[i].due[1] = <uint8_t*>calloc(n + 1, 1)
            if (self.sd[i].work == NULL or self.sd[i].pending == NULL or self.sd[i].fresh == NULL
                    or self.sd[i].due[0] == NULL or self.sd[i].due[1] == NULL):
                raise MemoryError(f"slice {sig}: out of memory")

    def __dealloc__(self):
        cdef int i
        for i in range(2):
            free(self.sd[i].work)
            free(self.sd[i].pending)
            free(self.sd[i].fresh)
            free(self.sd[i].due[0])
            free(self.sd[i].due[1])

    cdef uint64_t _total(self, int side) noexcept:
        cdef Side* sd = &self.sd[side]
        return self.solver.dims[sig_id(sd.wm, sd.wk, sd.bm, sd.bk)].total

    def sides(self) -> int:
        """1 for a slice that is its own colour partner, else 2."""
        return self.nsides

    def size(self) -> int:
        """Entries of the larger table."""
        return max(self._total(i) for i in range(self.nsides))

    def fill_part(self, int side, int part, int parts, int slot) -> int:
        """Part ``part`` of ``parts`` of the first sweep of one table (no GIL held)."""
        cdef uint64_t total = self._total(side)
        cdef uint64_t lo = _part_start(total, part, parts), hi = _part_start(total, part + 1, parts)
        cdef uint64_t n
        cdef Side* sd = &self.sd[side]
        cdef uint64_t* counter = self.progress + slot
        with nogil:
            n = _fill_range(&self.solver.rules, &self.solver.lk, sd, lo, hi, counter)
        return n

    def fill_done(self, int side, list counts):
        """Join the parts' lists of unresolved indices (each began at its stretch's start)."""
        cdef uint64_t total = self._total(side)
        cdef int parts = len(counts), part
        cdef uint64_t n = 0, lo, c
        cdef Side* sd = &self.sd[side]
        for part in range(parts):
            lo = _part_start(total, part, parts)
            c = counts[part]
            if lo != n and c:
                memmove(&sd.work[n], &sd.work[lo], c * sizeof(uint32_t))
            n += c
        sd.nwork = n

    def pass_part(self, int side, int k, int part, int parts, int slot) -> int:
        """Part ``part`` of ``parts`` of pass k over one table: how many it resolved (no GIL
        held). The parts of a pass may run at once; pass_done follows them all."""
        cdef Side* sd = &self.sd[side]
        cdef uint64_t lo = _part_start(sd.nwork, part, parts)
        cdef uint64_t hi = _part_start(sd.nwork, part + 1, parts)
        cdef int error = 0
        cdef int64_t changed
        cdef uint64_t* counter = self.progress + slot
        with nogil:
            changed = _pass_range(&self.solver.rules, &self.solver.lk, sd, k, lo, hi, counter,
                                  self.stop, &error)
        if changed < 0:
            sig = (sd.wm, sd.wk, sd.bm, sd.bk)
            if error == 1:
                raise RuntimeError(f"slice {sig}: a capture or crowning leads to a table that "
                                   "is not built yet")
            if error == 2:
                raise RuntimeError(f"slice {sig}: a distance exceeds {MAX_LOSS} plies")
            raise InterruptedError(f"slice {sig}: stopped")
        return changed

    def pass_done(self, int side) -> int:
        """After all parts of a pass over one table: write its verdicts; returns how many it
        resolved (the positions mark_part goes through)."""
        with nogil:
            _end_pass(&self.sd[side])
        return self.sd[side].nfresh

    def mark_part(self, int side, int k, int part, int parts, int slot):
        """Part ``part`` of ``parts`` of marking what pass k resolved in one table: the
        positions of the other table (of this one, for a slice that is its own partner)
        that may move into them are due in pass k + 1 (no GIL held; the parts may run at
        once, each only setting marks)."""
        cdef Side* sd = &self.sd[side]
        cdef Side* pred = &self.sd[(1 - side) if self.nsides == 2 else side]
        cdef uint64_t lo = _part_start(sd.nfresh, part, parts)
        cdef uint64_t hi = _part_start(sd.nfresh, part + 1, parts)
        with nogil:
            _mark_range(&self.solver.rules, &self.solver.lk, sd, pred, k, lo, hi)
