# Static evaluation: hundredths of a man, from the side to move's point of view.

from libc.stdint cimport uint64_t
from _fast.movegen cimport Rules, Pos

ctypedef struct EvalParams:
    int size
    int man
    int king
    int row_weight[10]       # men: bonus by rows advanced from the own back row
    int centre_bonus
    int back_rank_bonus
    int blocked_penalty
    int balance_penalty
    int runaway_bonus[10]    # by rows still to go
    int lone_king_draw       # international: a lone king against <= 3 pieces holds the draw
    uint64_t rows[10]        # row masks from the top (row 0 = White's crowning row)
    uint64_t centre
    uint64_t left_wing
    uint64_t right_wing
    uint64_t long_diagonal
    uint64_t cone[2][64]     # squares in front of a man that could stop it, per side

cdef void init_eval(EvalParams* e, const char* name, const Rules* r) noexcept
cdef int evaluate(const EvalParams* e, const Rules* r, const Pos* p) noexcept nogil
