# cython: language_level=3
"""Static evaluation for every rule set.

Material with a king value per rule set, advancement, centre, back-rank guard, blocked men,
wing balance (10x10), runaway men, and known drawn material. Scores are in hundredths of a man
from the side to move's point of view; the search resolves pending captures before it asks.
"""

from libc.stdint cimport uint64_t
from libc.string cimport memset, strcmp

from _fast.movegen cimport Rules, Pos, WHITE, BLACK, fill_cones
from _fast.bits cimport popcount, lsb


cdef inline int pc(uint64_t b) noexcept nogil:
    return popcount(b)


cdef inline int bit_of(int size, int s) noexcept nogil:
    return s + s // size


cdef void init_eval(EvalParams* e, const char* name, const Rules* r) noexcept:
    """Fill the weights and masks for one rule set (name as in engine.variants)."""
    cdef int size = r.size
    cdef int half = size // 2
    cdef int s, row, col, b, rr
    cdef int flying = r.flying
    memset(e, 0, sizeof(EvalParams))
    e.size = size
    e.man = 100
    if size == 10:
        e.king = 320
    elif flying:
        e.king = 260
    else:
        e.king = 150
    # advancement: a little per row, more close to crowning
    cdef int adv10[10]
    cdef int adv8[8]
    adv10[:] = [0, 2, 3, 4, 6, 8, 11, 15, 20, 0]
    adv8[:] = [0, 3, 5, 8, 12, 17, 24, 0]
    for rr in range(size):
        e.row_weight[rr] = adv10[rr] if size == 10 else adv8[rr]
    e.centre_bonus = 4
    e.back_rank_bonus = 6 if size == 8 else 4
    e.blocked_penalty = 3
    e.balance_penalty = 3 if size == 10 else 0
    for rr in range(1, size):
        e.runaway_bonus[rr] = 0
    e.runaway_bonus[1] = 70
    e.runaway_bonus[2] = 50
    e.runaway_bonus[3] = 30 if size == 10 else 0
    e.lone_king_draw = 1 if size == 10 else 0
    for s in range(size * half):
        row = s // half
        col = 2 * (s % half) + (1 if row % 2 == 0 else 0)
        b = bit_of(size, s)
        e.rows[row] |= (<uint64_t>1) << b
        if 2 <= col <= size - 3 and 3 <= row <= size - 4:
            e.centre |= (<uint64_t>1) << b
        if col < half:
            e.left_wing |= (<uint64_t>1) << b
        else:
            e.right_wing |= (<uint64_t>1) << b
        if row + col == size - 1:
            e.long_diagonal |= (<uint64_t>1) << b
    fill_cones(r, e.cone)


cdef int side_score(const EvalParams* e, const Pos* p, int side) noexcept nogil:
    """Positional terms of one side (material excluded)."""
    cdef uint64_t own = p.pieces[side]
    cdef uint64_t opp = p.pieces[1 - side]
    cdef uint64_t men = own & ~p.kings
    cdef uint64_t empty
    cdef uint64_t runners
    cdef int size = e.size
    cdef int score = 0
    cdef int rr, row, sq, togo, left, right
    if not men:
        return 0
    for rr in range(1, size):
        row = size - 1 - rr if side == WHITE else rr
        score += e.row_weight[rr] * pc(men & e.rows[row])
    score += e.centre_bonus * pc(men & e.centre)
    if not (opp & p.kings):
        row = size - 1 if side == WHITE else 0
        score += e.back_rank_bonus * pc(men & e.rows[row])
    if e.balance_penalty:
        left = pc(men & e.left_wing)
        right = pc(men & e.right_wing)
        score -= e.balance_penalty * (left - right if left > right else right - left)
    # runaway men: nothing of the opponent's in front of them, close to crowning
    runners = 0
    for togo in range(1, 4):
        row = togo if side == WHITE else size - 1 - togo
        runners |= men & e.rows[row]
    while runners:
        sq = lsb(runners)
        runners &= runners - 1
        if not (e.cone[side][sq] & opp):
            row = 0
            for togo in range(1, 4):
                rr = togo if side == WHITE else size - 1 - togo
                if e.rows[rr] & ((<uint64_t>1) << sq):
                    row = togo
            score += e.runaway_bonus[row] // (2 if (opp & p.kings) else 1)
    return score


cdef int evaluate(const EvalParams* e, const Rules* r, const Pos* p) noexcept nogil:
    cdef uint64_t w = p.pieces[WHITE]
    cdef uint64_t b = p.pieces[BLACK]
    cdef uint64_t k = p.kings
    cdef int nw = pc(w)
    cdef int nb = pc(b)
    cdef int material, score, lone, other
    cdef uint64_t empty = r.valid & ~(w | b)
    material = e.man * (pc(w & ~k) - pc(b & ~k)) + e.king * (pc(w & k) - pc(b & k))
    score = material + side_score(e, p, WHITE) - side_score(e, p, BLACK)
    # blocked men: no free square in front
    score -= e.blocked_penalty * (
        pc(w & ~k & ~((empty << r.shift[0]) | (empty << r.shift[1])))
        - pc(b & ~k & ~((empty >> r.shift[2]) | (empty >> r.shift[3]))))
    # ahead in material: trading down brings the win closer
    if material > 50 or material < -50:
        score += (1 if material > 0 else -1) * (2 * e.size * 2 - (nw + nb)) * 2
    # drawn material
    if nw == 1 and nb == 1 and (k & w) and (k & b):
        score = score // 16
    elif e.lone_king_draw and (nw == 1 or nb == 1):
        lone = WHITE if nw == 1 else BLACK
        other = nb if lone == WHITE else nw
        if (p.pieces[lone] & k) and (p.pieces[1 - lone] & k) and other <= 3:
            if p.pieces[lone] & e.long_diagonal or other <= 2:
                score = score // 32
            else:
                score = score // 2
    elif r.flying and (nw == 1 or nb == 1) and e.size == 8:
        lone = WHITE if nw == 1 else BLACK
        other = nb if lone == WHITE else nw
        if (p.pieces[lone] & k) and other <= 2:
            score = score // 16
    return score if p.side == WHITE else -score
