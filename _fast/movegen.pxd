# The C types of the core, shared by every _fast module that cimports them.
#
# Board layout ("ghost squares"): internal square s (0-based, White at the bottom moving to
# row 0) lives on bit s + s // size. One ghost bit after every two rows makes every diagonal
# step a single shift: up-left >> (half+1), up-right >> half, down-left << half,
# down-right << (half+1), where half = size // 2. Ghost bits are never set in a position.

from libc.stdint cimport uint64_t, uint32_t, uint8_t, int8_t

cdef enum:
    MAX_MOVES = 512
    MAX_PATH = 32
    WHITE = 0
    BLACK = 1

cdef enum Precedence:
    PREC_FREE = 0
    PREC_QUANTITY = 1
    PREC_QUANTITY_KINGS = 2
    PREC_ITALIAN = 3
    PREC_KING_PRIORITY = 4

cdef enum CapturePromotion:
    PROMO_PASS = 0
    PROMO_CONTINUE = 1
    PROMO_STOP = 2

ctypedef struct Rules:
    int size            # 8 or 10
    int nsq             # 32 or 50
    int half            # size // 2
    int shift[4]        # per direction: up-left, up-right, down-left, down-right
    uint64_t valid      # bits of real squares
    uint64_t promo[2]   # crowning row of White (row 0) and of Black (last row)
    int men_back        # men capture backwards
    int flying          # flying kings
    int men_take_kings  # men may capture kings
    int precedence
    int capture_promotion
    int forced          # captures are compulsory
    int8_t nb[64][4]    # neighbour bit index per direction, -1 off the board

ctypedef struct Pos:
    uint64_t pieces[2]   # all pieces (men and kings) of White, of Black
    uint64_t kings
    int side                   # WHITE or BLACK to move

ctypedef struct Move:
    uint64_t captured   # bits of the captured pieces
    uint8_t origin      # bit index
    uint8_t dest        # bit index
    uint8_t ncapt
    uint8_t promote     # the moving man ends as a king

ctypedef struct MoveList:
    int count
    Move moves[MAX_MOVES]

ctypedef struct PathList:
    uint8_t len[MAX_MOVES]
    uint8_t squares[MAX_MOVES][MAX_PATH]

cdef void init_rules(Rules* r, int size, int men_back, int flying, int men_take_kings,
                     int precedence, int capture_promotion, int forced) noexcept nogil
cdef int generate(const Rules* r, const Pos* p, MoveList* out, PathList* paths) noexcept nogil
cdef int has_capture(const Rules* r, const Pos* p) noexcept nogil
cdef void make_move(const Pos* p, const Move* m, Pos* out) noexcept nogil
cdef uint64_t perft_nodes(const Rules* r, const Pos* p, int depth) noexcept nogil
cdef int count_quiet(const Rules* r, const Pos* p) noexcept nogil
cdef int generate_captures(const Rules* r, const Pos* p, MoveList* out, PathList* paths) noexcept nogil
cdef void fill_cones(const Rules* r, uint64_t cone[2][64]) noexcept nogil


cdef class CoreRules:
    cdef Rules rules
    cdef readonly int size
    cdef uint64_t to_bits(self, object mask) except? 0
    cdef object from_bits(self, uint64_t b)
    cdef int square(self, int bit)
    cdef int load(self, Pos* p, object white, object black, object kings,
                  bint white_to_move) except -1
    cdef object move_tuple(self, Move* m, PathList* paths, int i)
