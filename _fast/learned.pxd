# The learned evaluation: a linear sum of features (patterns over windows of the board and a
# few scalars), each with a middlegame and an endgame weight blended by the game phase.
# See learned.pyx for the feature layout; engine/evaluation.py is its Python face.

from libc.stdint cimport uint64_t, int16_t, int32_t, int64_t, int8_t
from _fast.movegen cimport Rules, Pos

cdef enum:
    MAX_TABLES = 8        # pattern tables (each read twice: its window and the rotated one)
    TABLE_SIZE = 6561     # 3^8: a window holds 8 dark squares
    MAX_ENTRIES = 160     # feature entries of one position (bounded by the piece count)
    WEIGHT_SCALE = 16     # weights are int16 in 1/16 of a hundredth of a man
    EDGE_TABLES = 2       # edge strips of 3 files x 6 rows (9 dark squares), left and right
    EDGE_SIZE = 19683     # 3^9
    EDGE_CENTRE = 9841    # (3^9 - 1) / 2: the index of a strip without men
    MAX_WIDE = 4          # wide tables: windows of 4 files x 6 rows (12 dark squares)
    WIDE_SIZE = 531441    # 3^12
    READ_EDGES = 1        # LearnedEval.reads: which optional tables have a non-zero weight
    READ_WIDE = 2

ctypedef struct EvalLayout:
    int size
    int half
    int nsq
    int npairs            # row pairs (5 or 4); pair p is one contiguous run of bits
    int ntables
    int fwd_pair[MAX_TABLES]   # the table's own window: rows 2p..2p+3, columns 2k..2k+3
    int fwd_k[MAX_TABLES]
    int rot_pair[MAX_TABLES]   # the same window turned 180 degrees
    int rot_k[MAX_TABLES]
    uint64_t pair_mask
    uint64_t lane_offset       # 40 in every 16-bit lane
    uint64_t lut_fwd[1024]     # pair bits -> per column offset k (16-bit lane k) the base-3
    uint64_t lut_rev[1024]     #   number of its 4 squares, in reading order / reversed
    uint64_t band_fwd[2]       # per lane: table offset (t * 3^8) of the window there, for the
    uint64_t band_rot[2]       #   outer and inner band; turned windows: t * 3^8 + 3^8 - 1
    int phase_total            # total distance of the men to promotion at the start
    uint64_t dist_bits[4]      # union of the rows whose number has bit j set
    uint64_t file_bits[4]      # union of the files whose number has bit j set
    uint64_t left              # files 0 .. half-1
    uint64_t runway[2]         # rows 1..3 from the crowning row, per side
    uint64_t valid
    uint64_t long_diagonal
    uint64_t cone[2][64]       # squares from which an opponent could stop a man
    # edge strips: per row pair, the left strip's squares are pair bits {0, half, half+1} and
    # the right strip's {half-2, half-1, size-1}; lut_edge turns a pair's bits into the base-3
    # numbers of both (lane 0 the left, lane 1 the right, digits in square order), lut_edge_rev
    # into those of the turned reads (lane 0 the right strip, lane 1 the left, digits reversed)
    uint64_t lut_edge[1024]
    uint64_t lut_edge_rev[1024]
    uint64_t edge_offset       # 13 in lanes 0 and 1: keeps a pair's difference non-negative
    int men_back               # men capture backwards: they deny a king squares behind them
    int men_take_kings         # men may capture kings at all
    int broad_draws            # the side ahead with few pieces against a king (10x10)
    int8_t row_of_bit[64]
    int8_t square_of_bit[64]
    int shift[4]
    int flying
    int lone_king_draw
    int start_pieces
    # feature offsets (features, not parameters: each feature has 2 parameters)
    int f_material
    int f_trade
    int f_tempo
    int f_stm
    int f_balance
    int f_formation
    int f_runaway
    int f_king_mobility
    int f_king_square
    int f_pattern[MAX_TABLES]
    int f_edge[EDGE_TABLES]
    int nwide                  # wide tables: one per column offset (half - 1 of them)
    int f_wide[MAX_WIDE]
    int n_features
    int divisor                # phase_total * WEIGHT_SCALE
    uint64_t magic             # ceil(2^75 / divisor): division by a multiply-high

ctypedef struct LearnedEval:
    EvalLayout layout
    int16_t* weights           # n_features x (middlegame, endgame); NULL before loading
    int reads                  # READ_EDGES, READ_WIDE: those tables have a non-zero weight
                               # (a table whose weights are all zero is not read at all)

ctypedef struct FeatureSink:
    # accumulating mode (idx == NULL): sums of the weights; listing mode: the entries
    const int16_t* weights
    int32_t mg
    int32_t eg
    int n
    int32_t* idx
    int32_t* coef
    int phase                  # 0 .. phase_total
    int draw_divisor           # 1, 2, 8, 16 or 32: drawish material scaled toward zero
    int draw_shift             # its log2

cdef void init_layout(EvalLayout* L, const Rules* r) noexcept nogil
cdef int learned_evaluate(const LearnedEval* e, const Pos* p) noexcept nogil


cdef class EvalCore:
    cdef LearnedEval e
    cdef readonly int size
    cdef object _rules
