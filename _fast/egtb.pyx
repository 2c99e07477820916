# cython: language_level=3
"""Endgame databases: indexing of material slices, the nogil solver and the verify pass.

The rules are the move generator's (``_fast.movegen``): the solver only calls ``generate``
and ``make_move``. It is a forward-iteration solver: every pass walks the positions still
unresolved, generates their moves and looks the successors up, until a pass changes nothing.

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
from libc.stdlib cimport malloc, free
from libc.string cimport memset, memmove

from _fast.movegen cimport (Rules, Pos, Move, MoveList, CoreRules, generate, make_move,
                            WHITE, BLACK)
from _fast.egtb cimport Geometry, Dims, Lookup

from _fast.bits cimport popcount, lsb

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
    for s in range(r.nsq):
        g.flip[g.bit_of[s]] = g.bit_of[r.nsq - 1 - s]


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


cdef inline int _unrank(uint64_t idx, int k, int* out) noexcept nogil:
    """The k ranks (ascending into out) of combination index idx."""
    cdef int i, c
    c = 63
    for i in range(k, 0, -1):
        while BINOM[c][i] > idx:
            c -= 1
        out[i - 1] = c
        idx -= BINOM[c][i]
        c -= 1
    return 0


cdef inline uint64_t _place_free(const Geometry* g, uint64_t occupied, int* ranks,
                                 int k) noexcept nogil:
    """Bits of the squares whose ranks among the free squares are given (ascending)."""
    cdef uint64_t out = 0
    cdef int s, j = 0, free_rank = 0
    if k == 0:
        return 0
    for s in range(g.nsq):
        if (occupied >> g.bit_of[s]) & 1:
            continue
        if free_rank == ranks[j]:
            out |= (<uint64_t>1) << g.bit_of[s]
            j += 1
            if j == k:
                break
        free_rank += 1
    return out


cdef inline int position_of(const Geometry* g, uint64_t idx, int wm, int wk, int bm, int bk,
                            const Dims* d, Pos* p) noexcept nogil:
    """The White-to-move position of index idx; 0 when the index is invalid (men overlap)."""
    cdef int ranks[8]
    cdef int i
    cdef uint64_t ibk = idx % d.nbk
    idx //= d.nbk
    cdef uint64_t iwk = idx % d.nwk
    idx //= d.nwk
    cdef uint64_t ibm = idx % d.nbm
    cdef uint64_t iwm = idx // d.nbm
    cdef uint64_t wmen = 0, bmen = 0, wkings, bkings
    _unrank(iwm, wm, ranks)
    for i in range(wm):
        wmen |= (<uint64_t>1) << g.bit_of[ranks[i] + g.half]
    _unrank(ibm, bm, ranks)
    for i in range(bm):
        bmen |= (<uint64_t>1) << g.bit_of[ranks[i]]
    if wmen & bmen:
        return 0
    _unrank(iwk, wk, ranks)
    wkings = _place_free(g, wmen | bmen, ranks, wk)
    _unrank(ibk, bk, ranks)
    bkings = _place_free(g, wmen | bmen | wkings, ranks, bk)
    p.pieces[WHITE] = wmen | wkings
    p.pieces[BLACK] = bmen | bkings
    p.kings = wkings | bkings
    p.side = WHITE
    return 1


cdef inline uint64_t _flip_bits(const Geometry* g, uint64_t b) noexcept nogil:
    cdef uint64_t out = 0
    cdef int x
    while b:
        x = lsb(b)
        b &= b - 1
        out |= (<uint64_t>1) << g.flip[x]
    return out


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
    cdef int i, v, d
    cdef int best_win = 100000
    cdef int worst_loss = -1
    cdef int all_known_wins = 1
    n_in[0] = 0
    generate(r, p, &ml, NULL)
    if ml.count == 0:
        return LOSS0
    for i in range(ml.count):
        make_move(p, &ml.moves[i], &child)
        if ml.moves[i].ncapt or ml.moves[i].promote:
            v = lookup(lk, &child)
            if v < 0 or v == INVALID:
                return -3
            d = 0
        else:
            n_in[0] += 1
            normalise(lk.g, &child, &n)
            v = partner[index_of(lk.g, &n, qm, qk, pw, pk, pd)]
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


cdef uint64_t _fill_range(const Rules* r, const Lookup* lk, Side* sd, uint64_t lo,
                          uint64_t hi, uint64_t* progress) noexcept nogil:
    """Entries lo..hi-1: mark the invalid ones and those without moves (lost in 0); list the
    rest, from work[lo] on (a part's own stretch). Returns how many it listed."""
    cdef const Dims* d = &lk.dims[sig_id(sd.wm, sd.wk, sd.bm, sd.bk)]
    cdef uint64_t idx, n = 0
    cdef Pos p
    cdef MoveList ml
    for idx in range(lo, hi):
        if not position_of(lk.g, idx, sd.wm, sd.wk, sd.bm, sd.bk, d, &p):
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
    for i in range(lo, hi):
        position_of(lk.g, sd.work[i], sd.wm, sd.wk, sd.bm, sd.bk, d, &p)
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
    """Write the pass's verdicts and keep the still unresolved indices, in order."""
    cdef uint64_t i, keep = 0
    for i in range(sd.nwork):
        if sd.pending[i] < KEEP:
            sd.t[sd.work[i]] = <uint8_t>sd.pending[i]
        elif sd.pending[i] == KEEP:
            sd.work[keep] = sd.work[i]
            keep += 1
    sd.nwork = keep


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
              int slot, int parts=1, pool=None, int min_part=65536):
        """Solve slice sig and its colour partner (b is a when the slice is its own partner);
        progress[slot] counts the positions examined, and a non-zero progress[len - 1] (the
        last entry, not a slot) stops the job with InterruptedError. Returns the number of
        passes.

        With ``parts`` > 1 and an executor ``pool``, every pass is split into that many
        stretches of at least ``min_part`` entries (below that a thread costs more than it
        gains), run on the pool at once (part p counts in progress[slot + p]); the result is
        the same as with one part."""
        if not 0 <= slot or slot + max(parts, 1) > progress.shape[0] - 1:
            raise ValueError("progress needs a slot per part and a last entry for stop")
        job = PairSolve(self, sig, a, b, progress)
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
                job.pass_done(side)
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
    for idx in range(d.total):
        slot[0] = idx + 1
        if not position_of(lk.g, idx, wm, wk, bm, bk, d, &p):
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
                 uint64_t[::1] progress):
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
            if self.sd[i].work == NULL or self.sd[i].pending == NULL:
                raise MemoryError(f"slice {sig}: out of memory")

    def __dealloc__(self):
        cdef int i
        for i in range(2):
            free(self.sd[i].work)
            free(self.sd[i].pending)

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

    def pass_done(self, int side):
        """After all parts of a pass over one table: write its verdicts."""
        with nogil:
            _end_pass(&self.sd[side])
