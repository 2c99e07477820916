# cython: language_level=3
"""The search: principal variation search with a transposition table, capture quiescence,
killers, history, late-move reductions and the draw rules of each rule set.

Python drives the root (iterative deepening, aspiration windows, time checks between root
moves and info callbacks) through ``Searcher``; everything below the root runs here in C
without the GIL, and polls a stop flag that any thread may set.

Parallel search (Lazy SMP): helper Searchers share the main one's transposition table and
search the same root on their own threads (``run_helper``), each with its own killers,
history and stacks; they share results through the table, and tell each other which positions
they are searching so that they put those moves off and split the work (simplified ABDADA).
The table's entries are lockless: each stores ``key ^ data`` next to ``data``, both written and
read as single 64-bit words, so an entry half-written by another thread fails the key check
and is never used.
"""

from libc.stdint cimport uint64_t, uint32_t, uint16_t, uint8_t, int16_t, int8_t, int64_t
from libc.stdlib cimport calloc, free

cdef extern from *:
    """
    #include <stdlib.h>
    #include <string.h>
    #if !defined(_WIN32)
    #include <sys/mman.h>
    #endif
    /* The hash table: fresh anonymous pages on Linux and other POSIX systems, which read as
       zero and cost nothing until first written, so an engine starts at once whatever its
       hash size. Marked for transparent huge pages where Linux has them: faulting a page in
       then costs one fault per 2 MB instead of per 4 KB (16,000 faults for 64 MB, which is
       what made a first search slow). damka_table_touch faults every page in ahead of use. */
    static void* damka_table_alloc(size_t bytes) {
    #if defined(_WIN32)
        return calloc(1, bytes);
    #else
        void* p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) return NULL;
    #if defined(__linux__) && defined(MADV_HUGEPAGE)
        madvise(p, bytes, MADV_HUGEPAGE);
    #endif
        return p;
    #endif
    }
    static void damka_table_free(void* p, size_t bytes) {
        if (p == NULL) return;
    #if defined(_WIN32)
        free(p);
    #else
        munmap(p, bytes);
    #endif
    }
    /* Write every page of the table without changing a word (an atomic add of zero), so that
       it can run while searches read and write the table. */
    static void damka_table_touch(void* p, size_t bytes) {
        unsigned long long* w = (unsigned long long*)p;
        size_t step = 4096 / sizeof(unsigned long long), n = bytes / sizeof(unsigned long long), i;
        for (i = 0; i < n; i += step) __atomic_fetch_add(&w[i], 0ULL, __ATOMIC_RELAXED);
    }
    /* Table words are read and written whole (relaxed atomics: no lock, no fence); another
       thread may change the word next to it in between, which the key check catches. */
    static inline unsigned long long damka_load64(const unsigned long long* p) {
        return __atomic_load_n(p, __ATOMIC_RELAXED);
    }
    static inline void damka_store64(unsigned long long* p, unsigned long long v) {
        __atomic_store_n(p, v, __ATOMIC_RELAXED);
    }
    static inline int damka_load_int(const int* p) { return __atomic_load_n(p, __ATOMIC_RELAXED); }
    /* A helper's completed iteration is published under a sequence count (odd while it is
       being written), so that the main search never reads half of one. */
    static inline int damka_load_acquire_int(const int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
    static inline void damka_store_release_int(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
    static inline void damka_fence_acquire(void) { __atomic_thread_fence(__ATOMIC_ACQUIRE); }
    static inline void damka_fence_release(void) { __atomic_thread_fence(__ATOMIC_RELEASE); }
    static inline int damka_cas_int(int* p, int expected, int desired) {
        return __atomic_compare_exchange_n(p, &expected, desired, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
    }
    static inline void damka_store_int(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELAXED); }
    /* Ask for a table bucket's cache line ahead of the probe that will read it. */
    static inline void damka_prefetch(const void* p) {
    #if defined(__GNUC__) || defined(__clang__)
        __builtin_prefetch(p);
    #endif
    }
    /* The index of the first highest of s[start..n-1]. Written to compile without branches
       (conditional moves): move scores are data the branch predictor cannot learn, and the
       branchy loop's mispredictions were a twentieth of the search's time. */
    static inline int damka_argmax(const int* s, int start, int n) {
        int best = start, top = s[start], i, v, above;
        for (i = start + 1; i < n; i++) {
            v = s[i];
            above = v > top;
            best = above ? i : best;
            top = above ? v : top;
        }
        return best;
    }
    """
    void* damka_table_alloc(size_t bytes) nogil
    void damka_table_free(void* p, size_t bytes) nogil
    void damka_table_touch(void* p, size_t bytes) nogil
    uint64_t damka_load64(const uint64_t* p) noexcept nogil
    void damka_store64(uint64_t* p, uint64_t v) noexcept nogil
    int damka_load_int(const int* p) noexcept nogil
    int damka_load_acquire_int(const int* p) noexcept nogil
    void damka_store_release_int(int* p, int v) noexcept nogil
    void damka_fence_acquire() noexcept nogil
    void damka_fence_release() noexcept nogil
    int damka_cas_int(int* p, int expected, int desired) noexcept nogil
    void damka_store_int(int* p, int v) noexcept nogil
    void damka_prefetch(const void* p) noexcept nogil
    int damka_argmax(const int* s, int start, int n) noexcept nogil
from libc.string cimport memset, memcpy
from libc.math cimport log

cdef double LMR_DIVISOR = 2.0

# The search's rules that bench/ switches off one at a time to measure what each gives
# (bench/search_variant.py; docs/search.md lists what was tried and what it gave). All on is
# the search the engine plays with; no front end changes them.
cdef enum:
    F_ROOT_SCOUT = 1       # the root's null-window scouts are non-PV nodes
    F_TT_KEEP_MOVE = 2     # a node that fails low keeps the hash move it had
    F_HISTORY_MALUS = 4    # quiet moves tried before the cut-off move lose history
    F_TT_PV_CUT = 8        # exact hash cut-offs at PV nodes; proven bounds at any depth
    F_QS_EGTB = 16         # databases probed at quiet quiescence leaves
    F_EXTEND_SINGLE = 32   # one ply more at a node with a single legal move
    F_PRUNE = 64           # a cut verified by a shallower search against a raised bound
    F_LMR = 128            # late-move reductions without the killer and threat exemptions
    F_QS_THREAT = 256      # quiescence: a quiet position under a capture threat is searched
    F_PRUNE_GATE = 512     # no pruning verification at a quiet node scored below beta
    F_ALL = 1023

cdef int FEATURES = F_ALL
cdef int PRUNE_MARGIN = 5       # hundredths of a man per ply of depth (Scan 2.0's; 3.x: 10)
cdef int PRUNE_DEPTH = 3        # the least depth at which a node may be pruned
cdef int PRUNE_PERCENT = 40     # the verification's depth, percent of the node's
cdef int LMR_MODE = 3           # 0: Scan 2.0's steps; 1: the log table; 2: Scan 3.1's
                                # steps; 3: Scan 3.1's rule whole: from depth 2, a reduced
                                # move may drop into quiescence, only the hash move exempt
cdef int EXTEND_DEPTH = 1       # the least depth at which a single legal move is extended
cdef int EXTEND_MODE = 0        # bits that limit that extension: 1: none inside a pruning
                                # verification; 2: none right below an extended node; 4: at
                                # most half the line's nominal depth in extensions (0: none)
cdef int SINGULAR_DEPTH = 0     # the least depth of a PV node whose hash move may be found
                                # singular and extended (0: never)
cdef int SINGULAR_MARGIN = 20   # percent of a man below the hash score the others must stay
cdef int QS_PROMOTE = 0         # quiescence: a quiet position that does not stand pat tries
                                # its men's crowning steps (Scan 2.0's; 0: off)
cdef int ROOT_LMR = 0           # the main thread's root reduces its quiet moves by a ply from
                                # this one on (1-based, as at PV nodes below it; 0: never)
cdef int EVAL_GRAIN = 0         # thousandths of a man: static scores are rounded to a multiple
                                # of that many units (0: as they are)
cdef int HISTORY_MODE = 0       # 0: killers, and history by depth squared on cut-offs;
                                # 1: Scan's: no killers, a from-to history in [0, 1] that the
                                # best move of every node that beat alpha moves 1/32 of the way
                                # toward 1, and every quiet move tried before it toward 0


def _set_search_features(int features=F_ALL, int prune_margin=5, int prune_depth=3,
                         int prune_percent=40, int lmr_mode=3, int extend_depth=1,
                         int singular_depth=0, int singular_margin=20, int qs_promote=0,
                         int root_lmr=0, int history_mode=0, int extend_mode=0,
                         int eval_grain=0):
    """Choose the search's rules for the next searches (bench/search_variant.py compares
    them); the defaults are the engine's own."""
    global FEATURES, PRUNE_MARGIN, PRUNE_DEPTH, PRUNE_PERCENT, LMR_MODE, EXTEND_DEPTH
    global SINGULAR_DEPTH, SINGULAR_MARGIN, QS_PROMOTE, ROOT_LMR, HISTORY_MODE, EXTEND_MODE
    global EVAL_GRAIN
    FEATURES = features
    PRUNE_MARGIN = prune_margin
    PRUNE_DEPTH = prune_depth
    PRUNE_PERCENT = prune_percent
    LMR_MODE = lmr_mode
    EXTEND_DEPTH = extend_depth
    SINGULAR_DEPTH = singular_depth
    SINGULAR_MARGIN = singular_margin
    QS_PROMOTE = qs_promote
    ROOT_LMR = root_lmr
    HISTORY_MODE = history_mode
    EXTEND_MODE = extend_mode
    EVAL_GRAIN = eval_grain if eval_grain > 0 else 0


def _search_features():
    """The rules in force, as _set_search_features takes them."""
    return dict(features=FEATURES, prune_margin=PRUNE_MARGIN, prune_depth=PRUNE_DEPTH,
                prune_percent=PRUNE_PERCENT, lmr_mode=LMR_MODE, extend_depth=EXTEND_DEPTH,
                singular_depth=SINGULAR_DEPTH, singular_margin=SINGULAR_MARGIN,
                qs_promote=QS_PROMOTE, root_lmr=ROOT_LMR, history_mode=HISTORY_MODE,
                extend_mode=EXTEND_MODE, eval_grain=EVAL_GRAIN)


SEARCH_FEATURES = dict(root_scout=F_ROOT_SCOUT, tt_keep_move=F_TT_KEEP_MOVE,
                       history_malus=F_HISTORY_MALUS, tt_pv_cut=F_TT_PV_CUT,
                       qs_egtb=F_QS_EGTB, extend_single=F_EXTEND_SINGLE, prune=F_PRUNE,
                       lmr=F_LMR, qs_threat=F_QS_THREAT, prune_gate=F_PRUNE_GATE)

from _fast.movegen cimport (
    Rules, Pos, Move, MoveList, PathList, CoreRules, WHITE, BLACK, MAX_MOVES,
    generate, generate_captures, has_capture, count_quiet, make_move,
)
from _fast.evaluate cimport EvalParams, evaluate, init_eval
from _fast.bits cimport popcount, lsb
from _fast.learned cimport LearnedEval, EvalCore, learned_evaluate
from _fast.egtb cimport Lookup, Solver, lookup as egtb_lookup

cdef extern from *:
    """
    #if defined(_WIN32)
    #include <windows.h>
    static double damka_now(void) {
        LARGE_INTEGER f, c; QueryPerformanceFrequency(&f); QueryPerformanceCounter(&c);
        return (double)c.QuadPart / (double)f.QuadPart;
    }
    #else
    #include <time.h>
    static double damka_now(void) {
        struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
    }
    #endif
    """
    double damka_now() noexcept nogil

cdef enum:
    MAX_PLY = 128
    MAX_HISTORY = 1024
    MATE = 30000
    MATE_BOUND = 29000       # scores beyond this are wins/losses in N plies
    INF = 32000
    TT_EXACT = 1
    TT_LOWER = 2
    TT_UPPER = 3
    NO_MOVE = 255
    POLL_MASK = 1023
    HISTORY_ONE = 1 << 16    # certainty in HISTORY_MODE 1's history

cdef enum:
    EVAL_CACHE_SLOTS = 1 << 13   # 64 KB a thread (larger measured no faster)


ctypedef struct TTEntry:
    # what the table holds: two words, data packed (see pack_data) and check = key ^ data
    uint64_t check
    uint64_t data

ctypedef struct TTData:
    # an entry read out of the table, unpacked: a private copy no other thread can change
    int score
    int depth
    int flag           # 0: no entry
    int age
    int move           # index in the generated move list (generation is deterministic)

ctypedef struct DrawState:
    int reversible     # plies since a man moved or a piece was captured (king-only run)
    int no_progress    # plies since a capture or a crowning (8x8 40-move rule)
    int endgame_kind   # 0, 16 or 5: which international endgame rule applies
    int endgame        # plies since that endgame rule began

ctypedef struct DrawConfig:
    int king_moves_plies      # international 25-move rule, in plies; 0 = none
    int no_progress_plies     # 8x8 40-move rule, in plies; 0 = none
    int endgame_three_plies   # lone king against three pieces; 0 = none
    int endgame_two_plies     # lone king against two pieces or fewer; 0 = none

ctypedef struct SearchState:
    Rules rules
    EvalParams eval
    const LearnedEval* learned   # NULL: the hand-written evaluation
    const Lookup* egtb           # NULL: no endgame databases
    int egtb_pieces              # probe positions with at most this many pieces
    DrawConfig draws
    TTEntry* tt
    uint64_t tt_mask           # number of 4-entry buckets - 1
    uint8_t age
    uint64_t nodes
    uint64_t node_limit        # 0 = none
    double deadline            # 0 = none
    int stop
    int sel_depth
    uint64_t keys[MAX_HISTORY + MAX_PLY]   # game history then the search path
    int history_len
    DrawState draw[MAX_PLY + 1]
    uint16_t killers[MAX_PLY][2]
    int history[2][64][64]
    Move pv[MAX_PLY][MAX_PLY]
    int pv_len[MAX_PLY]
    int helper                 # 0: the main search; k > 0: the k-th helper thread
    int iteration              # main: the depth of the iteration it is in (helpers read it)
    int depth_limit            # main: the deepest iteration it will search (helpers stop there)
    SearchState* leader        # helper: the main search's state
    int helper_depth           # helper: the iteration it is on
    int done_seq               # helper: odd while its done_* fields are being written
    int done_depth             # helper: its deepest completed iteration (0: none yet)
    int done_score             # ... its score, and its principal variation
    int done_pv_len
    Move done_pv[MAX_PLY]
    uint64_t* busy             # keys some thread of this search is searching now (NULL: one thread)
    int man                    # a man in the evaluation's units (pruning margins follow it)
    int verifying              # > 0 inside a pruning verification: no pruning there
    int extensions[MAX_PLY + 1]  # single-move extensions on the path to each ply
    uint64_t deferred          # moves put off because another thread was searching them
    uint64_t eval_cache[EVAL_CACHE_SLOTS]  # recent learned scores: check bits | int16 score


# ---------------------------------------------------------------------------------------
# Zobrist keys

cdef uint64_t ZOBRIST[4][64]
cdef uint64_t ZOBRIST_SIDE


cdef uint64_t splitmix(uint64_t* state) noexcept nogil:
    state[0] += 0x9E3779B97F4A7C15ULL
    cdef uint64_t z = state[0]
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL
    return z ^ (z >> 31)


cdef int LMR[64][64]


cdef void init_lmr() noexcept nogil:
    """Late-move reductions grow with the depth left and the number of moves tried."""
    cdef int d, m
    for d in range(64):
        for m in range(64):
            LMR[d][m] = 0
            if d >= 3 and m >= 2:
                LMR[d][m] = <int>(0.3 + log(d) * log(m) / LMR_DIVISOR)
                if LMR[d][m] < 1:
                    LMR[d][m] = 1


cdef void init_zobrist() noexcept nogil:
    global ZOBRIST_SIDE
    cdef uint64_t state = 0x64616D6B61ULL   # "damka"
    cdef int t, b
    for t in range(4):
        for b in range(64):
            ZOBRIST[t][b] = splitmix(&state)
    ZOBRIST_SIDE = splitmix(&state)


init_zobrist()
init_lmr()


cdef inline int piece_kind(const Pos* p, int side, uint64_t bit) noexcept nogil:
    """0 white man, 1 black man, 2 white king, 3 black king."""
    return side + (2 if p.kings & bit else 0)


cdef uint64_t position_key(const Pos* p) noexcept nogil:
    cdef uint64_t key = 0
    cdef uint64_t b
    cdef int side, sq
    for side in range(2):
        b = p.pieces[side]
        while b:
            sq = lsb(b)
            b &= b - 1
            key ^= ZOBRIST[piece_kind(p, side, (<uint64_t>1) << sq)][sq]
    if p.side == BLACK:
        key ^= ZOBRIST_SIDE
    return key


cdef uint64_t key_after(const Pos* p, uint64_t key, const Move* m) noexcept nogil:
    cdef int side = p.side
    cdef uint64_t frm = (<uint64_t>1) << m.origin
    cdef int kind = piece_kind(p, side, frm)
    cdef uint64_t c = m.captured
    cdef int sq
    key ^= ZOBRIST[kind][m.origin] ^ ZOBRIST_SIDE
    if m.promote:
        kind += 2
    key ^= ZOBRIST[kind][m.dest]
    while c:
        sq = lsb(c)
        c &= c - 1
        key ^= ZOBRIST[piece_kind(p, 1 - side, (<uint64_t>1) << sq)][sq]
    return key


# ---------------------------------------------------------------------------------------
# Transposition table: buckets of four 16-byte entries, depth- and age-aware replacement

# Mate and database scores count plies from the root: the table holds them counted from the
# node, so that a transposition at another ply reads them right. Static scores stay below.
cdef enum:
    PLY_SCORE_BOUND = 20000


cdef inline int score_to_tt(int score, int ply) noexcept nogil:
    if score > PLY_SCORE_BOUND:
        return score + ply
    if score < -PLY_SCORE_BOUND:
        return score - ply
    return score


cdef inline int score_from_tt(int score, int ply) noexcept nogil:
    if score > PLY_SCORE_BOUND:
        return score - ply
    if score < -PLY_SCORE_BOUND:
        return score + ply
    return score


cdef inline uint64_t pack_data(int score, int depth, int flag, int age, int move) noexcept nogil:
    return ((<uint64_t>(<uint16_t>(<int16_t>score)))
            | ((<uint64_t>(<uint8_t>depth)) << 16)
            | ((<uint64_t>(<uint8_t>flag)) << 24)
            | ((<uint64_t>(<uint8_t>age)) << 32)
            | ((<uint64_t>(<uint8_t>move)) << 40))


cdef inline void unpack_data(uint64_t data, TTData* out) noexcept nogil:
    out.score = <int16_t>(<uint16_t>(data & 0xFFFF))
    out.depth = (data >> 16) & 0xFF
    out.flag = (data >> 24) & 0xFF
    out.age = (data >> 32) & 0xFF
    out.move = (data >> 40) & 0xFF


cdef inline int tt_read(TTEntry* e, uint64_t key, TTData* out) noexcept nogil:
    """Copy the entry out, whole, if it is ``key``'s: 1 when it is, else 0. Data torn by a
    concurrent write no longer matches its check word, so it reads as another key's."""
    cdef uint64_t data = damka_load64(&e.data)
    cdef uint64_t check = damka_load64(&e.check)
    if check ^ data != key:
        return 0
    unpack_data(data, out)
    return 1


cdef int tt_probe(SearchState* s, uint64_t key, TTData* out) noexcept nogil:
    """1 and the entry for ``key`` in ``out`` when the table has one, else 0."""
    cdef TTEntry* bucket = &s.tt[(key & s.tt_mask) * 4]
    cdef int i
    for i in range(4):
        if tt_read(&bucket[i], key, out) and out.flag:
            return 1
    return 0


cdef void tt_store(SearchState* s, uint64_t key, int depth, int flag, int score, int move,
                   int ply) noexcept nogil:
    cdef TTEntry* bucket = &s.tt[(key & s.tt_mask) * 4]
    cdef TTEntry* e = NULL
    cdef TTData old
    cdef uint64_t data
    cdef int i, worth, worst = 1 << 30
    for i in range(4):
        if tt_read(&bucket[i], key, &old):
            e = &bucket[i]
            if move == NO_MOVE:
                move = old.move
            if depth < old.depth - 2 and flag != TT_EXACT and old.age == s.age:
                return
            break
    if e == NULL:
        for i in range(4):
            # replace the shallowest entry, entries from older searches first (a racing
            # writer can only make this choice worse, never an entry wrong)
            unpack_data(damka_load64(&bucket[i].data), &old)
            worth = old.depth - 8 * ((s.age - old.age) & 63)
            if old.flag == 0:
                worth = -1000
            if worth < worst:
                worst = worth
                e = &bucket[i]
    data = pack_data(score_to_tt(score, ply), depth if depth > 0 else 0, flag, s.age, move)
    damka_store64(&e.data, data)
    damka_store64(&e.check, key ^ data)


# ---------------------------------------------------------------------------------------
# Draw rules

cdef inline int endgame_kind(const Pos* p) noexcept nogil:
    """16 or 5 when an international endgame draw rule applies to the material, else 0."""
    cdef int side, n_lone, n_other
    cdef uint64_t lone, other
    for side in range(2):
        lone = p.pieces[side]
        other = p.pieces[1 - side]
        if lone and not (lone & (lone - 1)) and (lone & p.kings) and (other & p.kings):
            n_other = popcount(other)
            if n_other == 3:
                return 16
            if n_other <= 2:
                return 5
    return 0


cdef void next_draw_state(SearchState* s, const Pos* before, const Move* m, const Pos* after,
                          const DrawState* d, DrawState* out) noexcept nogil:
    cdef int man_moved = not ((before.kings >> m.origin) & 1)
    if m.captured or man_moved:
        out.reversible = 0
    else:
        out.reversible = d.reversible + 1
    if m.captured or m.promote:
        out.no_progress = 0
    else:
        out.no_progress = d.no_progress + 1
    if s.draws.endgame_three_plies:
        out.endgame_kind = endgame_kind(after)
        if out.endgame_kind and out.endgame_kind == d.endgame_kind:
            out.endgame = d.endgame + 1
        elif out.endgame_kind == 5 and d.endgame_kind == 16:
            # the lone king took a piece: the 16 moves' end stands, and 5 more at most
            out.endgame = max(0, s.draws.endgame_two_plies
                              - (s.draws.endgame_three_plies - d.endgame - 1))
        else:
            out.endgame = 0
    else:
        out.endgame_kind = 0
        out.endgame = 0


cdef int is_draw(SearchState* s, int ply) noexcept nogil:
    """Draw by a move-count rule or by repetition along the game and the search path."""
    cdef DrawState* d = &s.draw[ply]
    cdef int i, idx, limit
    if s.draws.king_moves_plies and d.reversible >= s.draws.king_moves_plies:
        return 1
    if s.draws.no_progress_plies and d.no_progress >= s.draws.no_progress_plies:
        return 1
    if d.endgame_kind == 16 and d.endgame >= s.draws.endgame_three_plies:
        return 1
    if d.endgame_kind == 5 and d.endgame >= s.draws.endgame_two_plies:
        return 1
    # only king moves without capture are reversible: look back along that run
    idx = s.history_len + ply
    limit = d.reversible
    i = 4
    while i <= limit and idx - i >= 0:
        if s.keys[idx - i] == s.keys[idx]:
            return 1
        i += 2
    return 0


# ---------------------------------------------------------------------------------------
# Search

cdef enum:
    EVAL_LIMIT = 20000         # static scores stay far from the mate scores


cdef inline uint64_t eval_hash(const Pos* p) noexcept nogil:
    """A hash of the position for the evaluation cache (the search's Zobrist key is not at
    hand in quiescence), its top bit set so that an empty slot never matches."""
    cdef uint64_t h = ((p.pieces[0] * <uint64_t>0x9E3779B97F4A7C15ULL)
                       ^ (p.pieces[1] * <uint64_t>0xC2B2AE3D27D4EB4FULL)
                       ^ (p.kings * <uint64_t>0x165667B19E3779F9ULL) ^ <uint64_t>p.side)
    h ^= h >> 29
    h *= <uint64_t>0xBF58476D1CE4E5B9ULL
    h ^= h >> 32
    return h | (<uint64_t>1 << 63)


cdef inline void forget_scores(SearchState* s) noexcept nogil:
    """Empty the cache of learned scores: an EvalCore's weights may be set again between
    searches, so no cached score may outlive the search (or the evaluation) it came from."""
    memset(s.eval_cache, 0, sizeof(s.eval_cache))


cdef inline int cached_learned_eval(SearchState* s, const Pos* p) noexcept nogil:
    """The learned score, from the cache when the position was scored lately: about a fifth
    of the static scores a search asks for are of positions it scored shortly before (moves
    played in another order), and scoring takes about a fifth of the search's time."""
    cdef uint64_t h = eval_hash(p)
    cdef uint64_t* slot = &s.eval_cache[(h >> 16) & (EVAL_CACHE_SLOTS - 1)]
    cdef int v
    if ((slot[0] ^ h) >> 16) == 0:
        return <int16_t>(<uint16_t>(slot[0] & 0xFFFF))
    v = learned_evaluate(s.learned, p)
    if -32768 <= v <= 32767:
        slot[0] = (h & ~(<uint64_t>0xFFFF)) | <uint16_t>(<int16_t>v)
    return v


cdef inline int static_eval(SearchState* s, const Pos* p) noexcept nogil:
    """The static evaluation in use (side to move's view)."""
    cdef int v, grain
    if s.learned == NULL:
        return evaluate(&s.eval, &s.rules, p)
    v = cached_learned_eval(s, p)
    if EVAL_GRAIN:
        # a coarser score: fewer null-window searches that fail high by a unit only to fail
        # low when searched again (halves rounded away from zero: neither colour favoured)
        grain = (EVAL_GRAIN * s.man + 500) // 1000
        if grain > 1:
            if v >= 0:
                v = (v + grain // 2) // grain * grain
            else:
                v = -((-v + grain // 2) // grain * grain)
    if v > EVAL_LIMIT:
        return EVAL_LIMIT
    if v < -EVAL_LIMIT:
        return -EVAL_LIMIT
    return v


cdef enum:
    TB_WIN = 25000             # a database win: above every static score, below the mates
    NO_TB = -INF - 1


cdef int counter_plies_left(SearchState* s, const Pos* p, int ply) noexcept nogil:
    """Plies until a move-count draw rule ends the game, counted from this node (a win that
    needs more plies to reach its next capture or crowning is a draw)."""
    cdef DrawState* d = &s.draw[ply]
    cdef int left = 1 << 20
    if s.draws.no_progress_plies:
        left = s.draws.no_progress_plies - d.no_progress
    if d.endgame_kind == 16 and s.draws.endgame_three_plies - d.endgame < left:
        left = s.draws.endgame_three_plies - d.endgame
    if d.endgame_kind == 5 and s.draws.endgame_two_plies - d.endgame < left:
        left = s.draws.endgame_two_plies - d.endgame
    if (s.draws.king_moves_plies and not ((p.pieces[0] | p.pieces[1]) & ~p.kings)
            and s.draws.king_moves_plies - d.reversible < left):
        left = s.draws.king_moves_plies - d.reversible
    return left


cdef int egtb_score(SearchState* s, const Pos* p, int ply) noexcept nogil:
    """The databases' score of a position within their piece count and with no capture
    pending, else NO_TB. Wins come sooner the nearer the root."""
    cdef int v, plies
    if popcount(p.pieces[0] | p.pieces[1]) > s.egtb_pieces or has_capture(&s.rules, p):
        return NO_TB
    v = egtb_lookup(s.egtb, p)
    if v < 0 or v == 255:
        return NO_TB
    if v == 0:
        return 0
    plies = v if v < 128 else v - 128
    if plies > counter_plies_left(s, p, ply):
        return 0
    return TB_WIN - ply if v < 128 else -TB_WIN + ply


cdef enum:
    STOP_SEARCH = 1            # stop(), the deadline or the node limit: the search ends
    STOP_HELPER_AHEAD = 2      # a helper completed this iteration: the main search takes it
    STOP_STALE = 3             # a helper's iteration that the main search has gone beyond


cdef inline int poll(SearchState* s) noexcept nogil:
    s.nodes += 1
    if (s.nodes & POLL_MASK) == 0:
        if s.node_limit and s.nodes >= s.node_limit:
            s.stop = 1
        elif s.deadline > 0 and damka_now() >= s.deadline:
            s.stop = 1
        elif s.helper > 0 and damka_load_int(&s.leader.iteration) > s.helper_depth:
            # the main search has completed this helper's iteration: it is of no more use
            damka_cas_int(&s.stop, 0, STOP_STALE)
    return s.stop


cdef inline bint both_have_men(const Pos* p) noexcept nogil:
    """Whether each side still has a man: with kings only on a side, wins are manoeuvres that
    neither a pruning margin nor a reduced first move may be allowed to hide."""
    return (p.pieces[0] & ~p.kings) != 0 and (p.pieces[1] & ~p.kings) != 0


cdef inline bint opponent_threatens(SearchState* s, const Pos* p) noexcept nogil:
    """Whether the side not to move would have a capture if it were its turn."""
    cdef Pos other = p[0]
    other.side = 1 - p.side
    return has_capture(&s.rules, &other)


cdef inline uint64_t crowning_squares(const Rules* r, const Pos* p) noexcept nogil:
    """The empty crowning squares a man of the side to move reaches in one step."""
    cdef uint64_t men = p.pieces[p.side] & ~p.kings
    cdef uint64_t empty = r.valid & ~(p.pieces[0] | p.pieces[1])
    if p.side == WHITE:
        return ((men >> r.shift[0]) | (men >> r.shift[1])) & empty & r.promo[WHITE]
    return ((men << r.shift[2]) | (men << r.shift[3])) & empty & r.promo[BLACK]


cdef int crowning_steps(SearchState* s, const Pos* p, int ply, int alpha,
                        int beta) noexcept nogil:
    """A quiet quiescence node's score: it stands pat, then tries the moves that crown a man
    (a king is worth several men, which a static score of the man before it cannot see)."""
    cdef MoveList ml
    cdef Pos child
    cdef int i, score
    cdef int best = static_eval(s, p)
    if best >= beta or crowning_squares(&s.rules, p) == 0:
        return best
    if best > alpha:
        alpha = best
    generate(&s.rules, p, &ml, NULL)
    for i in range(ml.count):
        if not ml.moves[i].promote:
            continue
        make_move(p, &ml.moves[i], &child)
        score = -quiesce(s, &child, ply + 1, -beta, -alpha, 0)
        if s.stop:
            return 0
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if score >= beta:
                    break
    return best


cdef int quiesce(SearchState* s, const Pos* p, int ply, int alpha, int beta,
                 bint first) noexcept nogil:
    """Resolve pending captures: a position with a capture to make is never scored statically.
    At the first quiescence ply (``first``) a quiet position in which the opponent threatens
    a capture is searched one full ply instead (the evaluation is trained on positions with
    no capture for either side)."""
    cdef MoveList ml
    cdef Pos child
    cdef int i, score, best
    if poll(s):
        return 0
    if ply > s.sel_depth:
        s.sel_depth = ply
    if ply >= MAX_PLY - 1:
        return static_eval(s, p)
    if not has_capture(&s.rules, p):
        if count_quiet(&s.rules, p) == 0:
            return -MATE + ply
        if (FEATURES & F_QS_EGTB) and s.egtb != NULL \
                and popcount(p.pieces[0] | p.pieces[1]) <= s.egtb_pieces:
            score = egtb_score(s, p, ply)
            if score != NO_TB:
                return score
        if not (first and (FEATURES & F_QS_THREAT) and opponent_threatens(s, p)):
            if QS_PROMOTE:
                return crowning_steps(s, p, ply, alpha, beta)
            return static_eval(s, p)
        # a threat: every move, each answered by the captures it leaves
        generate(&s.rules, p, &ml, NULL)
        best = -INF
        for i in range(ml.count):
            make_move(p, &ml.moves[i], &child)
            score = -quiesce(s, &child, ply + 1, -beta, -alpha, 0)
            if s.stop:
                return 0
            if score > best:
                best = score
                if score > alpha:
                    alpha = score
                    if score >= beta:
                        break
        return best
    best = -INF
    if not s.rules.forced:
        # the house rule: the side to move may decline to capture
        best = static_eval(s, p)
        if best >= beta:
            return best
        if best > alpha:
            alpha = best
    generate_captures(&s.rules, p, &ml, NULL)
    for i in range(ml.count):
        make_move(p, &ml.moves[i], &child)
        score = -quiesce(s, &child, ply + 1, -beta, -alpha, 0)
        if s.stop:
            return 0
        if score > best:
            best = score
            if score > alpha:
                alpha = score
                if score >= beta:
                    break
    return best


cdef inline uint16_t quiet_id(const Move* m) noexcept nogil:
    return <uint16_t>((m.origin << 8) | m.dest | 0x8000)


cdef void order_moves(SearchState* s, const Pos* p, MoveList* ml, int tt_move, int ply,
                      int* scores) noexcept nogil:
    cdef int i
    cdef Move* m
    cdef uint16_t q
    for i in range(ml.count):
        m = &ml.moves[i]
        if i == tt_move:
            scores[i] = 1 << 30
        elif m.captured:
            scores[i] = (1 << 28) + m.ncapt * 64 + popcount(m.captured & p.kings) * 16
        else:
            # (HISTORY_MODE 1 writes no killers, and set_position clears them: they never match)
            q = quiet_id(m)
            if q == s.killers[ply][0]:
                scores[i] = (1 << 27) + 2
            elif q == s.killers[ply][1]:
                scores[i] = (1 << 27) + 1
            else:
                scores[i] = s.history[p.side][m.origin][m.dest] + (1 << 20 if m.promote else 0)


cdef void vary_root_order(SearchState* s, MoveList* ml, int tt_move, int* scores) noexcept nogil:
    """Helper threads after the first start their root on different moves (the hash move
    still first), so that they fill the shared table with different parts of the tree."""
    cdef int i
    cdef int first = (s.helper - 1) % ml.count
    for i in range(ml.count):
        if i != tt_move:
            scores[i] = ml.count - (i - first + ml.count) % ml.count


cdef inline int pick(MoveList* ml, int* scores, int start) noexcept nogil:
    """Bring the best-scored remaining move to ``start`` (selection sort, lazily)."""
    cdef int best = damka_argmax(scores, start, ml.count)
    cdef Move tmp
    cdef int ts
    if best != start:
        tmp = ml.moves[start]
        ml.moves[start] = ml.moves[best]
        ml.moves[best] = tmp
        ts = scores[start]
        scores[start] = scores[best]
        scores[best] = ts
    return best


# Lazy SMP threads tell each other which positions they are searching (simplified ABDADA):
# a thread defers a move whose position another thread is searching to the end of its list,
# so that the threads of one iteration split its work instead of repeating it.
cdef enum:
    BUSY_SLOTS = 16384         # 128 KB shared by a search's threads
    DEFER_DEPTH = 3            # shallower nodes are cheaper to search than to coordinate


cdef inline bint busy_elsewhere(SearchState* s, uint64_t key) noexcept nogil:
    return damka_load64(&s.busy[key & (BUSY_SLOTS - 1)]) == key


cdef inline void busy_mark(SearchState* s, uint64_t key) noexcept nogil:
    damka_store64(&s.busy[key & (BUSY_SLOTS - 1)], key)


cdef inline void busy_clear(SearchState* s, uint64_t key) noexcept nogil:
    if damka_load64(&s.busy[key & (BUSY_SLOTS - 1)]) == key:
        damka_store64(&s.busy[key & (BUSY_SLOTS - 1)], 0)


cdef int search(SearchState* s, const Pos* p, int depth, int ply, int alpha, int beta,
                int pv_node) noexcept nogil:
    cdef MoveList ml
    cdef int scores[MAX_MOVES]
    cdef int original_index[MAX_MOVES]
    cdef Pos child
    cdef TTData e
    cdef uint64_t key = s.keys[s.history_len + ply]
    cdef int i, j, score, best, best_index, tt_move, moved, reduction, new_depth, flag, tmp
    cdef int alpha0 = alpha
    cdef int margin, raised, extension
    cdef Move* m
    cdef uint16_t q
    cdef uint16_t deferred[MAX_MOVES]
    cdef uint16_t tried_quiet[MAX_MOVES]
    cdef int n_quiet = 0
    cdef int n_deferred = 0, k = 0
    cdef bint coordinate = s.busy != NULL and depth >= DEFER_DEPTH
    cdef bint opp_capture
    cdef uint64_t child_key
    cdef int singular_move, tt_score = 0
    cdef bint have_entry = 0
    cdef int best_quiet = -1       # the best move when it beat alpha, if quiet: origin << 8 | dest
    cdef int quiet_before = 0      # ... and how many quiet moves were tried before it

    s.pv_len[ply] = 0
    if depth <= 0:
        return quiesce(s, p, ply, alpha, beta, 1)
    if poll(s):
        return 0
    if ply > s.sel_depth:
        s.sel_depth = ply
    if ply > 0 and is_draw(s, ply):
        # the move that completed a count may also have left no legal move: that is a loss
        # first (as engine.game rules it; a repeated position always has moves)
        if not has_capture(&s.rules, p) and count_quiet(&s.rules, p) == 0:
            return -MATE + ply
        return 0
    if ply >= MAX_PLY - 2:
        return static_eval(s, p)
    # mate distance pruning
    if alpha < -MATE + ply:
        alpha = -MATE + ply
    if beta > MATE - ply - 1:
        beta = MATE - ply - 1
    if alpha >= beta:
        return alpha
    if s.egtb != NULL:
        score = egtb_score(s, p, ply)
        if score != NO_TB:
            return score

    tt_move = NO_MOVE
    if tt_probe(s, key, &e):
        have_entry = 1
        tt_move = e.move
        score = score_from_tt(e.score, ply)
        tt_score = score
        if e.depth >= depth and (not pv_node or ((FEATURES & F_TT_PV_CUT) and ply >= 2
                                                 and e.flag == TT_EXACT)):
            # (at PV nodes an exact score only, and not next to the root, whose line gives
            # the ponder move)
            if (e.flag == TT_EXACT or (e.flag == TT_LOWER and score >= beta)
                    or (e.flag == TT_UPPER and score <= alpha)):
                return score
        elif FEATURES & F_TT_PV_CUT:
            # a proven win or loss holds at any depth
            if ((score > PLY_SCORE_BOUND and e.flag != TT_UPPER and score >= beta)
                    or (score < -PLY_SCORE_BOUND and e.flag != TT_LOWER and score <= alpha)):
                return score

    # forward pruning: a node whose shallower search clears beta by a margin growing with the
    # depth is taken as a cut-off (no pruning inside that verification; never near a proven
    # score, nor when a side has kings only: wins there are manoeuvres no margin sees)
    if ((FEATURES & F_PRUNE) and not pv_node and s.verifying == 0 and depth >= PRUNE_DEPTH
            and -PLY_SCORE_BOUND < beta < PLY_SCORE_BOUND and ply > 0 and both_have_men(p)
            # (nor at a quiet node whose static score is below beta: most such verifications
            # fail, 82% from the international start, their nodes spent for nothing)
            and not ((FEATURES & F_PRUNE_GATE) and not has_capture(&s.rules, p)
                     and static_eval(s, p) < beta)):
        margin = (depth * PRUNE_MARGIN * s.man + 50) // 100
        raised = beta + margin
        if raised < PLY_SCORE_BOUND:
            s.verifying += 1
            score = search(s, p, depth * PRUNE_PERCENT // 100, ply, raised - 1, raised, 0)
            s.verifying -= 1
            if s.stop:
                return 0
            if score >= raised:
                return score if score > PLY_SCORE_BOUND else score - margin
            s.pv_len[ply] = 0
            if tt_move == NO_MOVE and tt_probe(s, key, &e):
                tt_move = e.move

    generate(&s.rules, p, &ml, NULL)
    if ml.count == 0:
        return -MATE + ply
    if tt_move >= ml.count:
        tt_move = NO_MOVE
    for i in range(ml.count):
        original_index[i] = i
    order_moves(s, p, &ml, tt_move, ply, scores)
    if ply == 0 and s.helper > 1:
        vary_root_order(s, &ml, tt_move, scores)
    # one legal move (mostly a forced capture): a ply more, which costs next to nothing
    extension = 0
    if ply == 0:
        s.extensions[0] = 0
    if (ml.count == 1 and (FEATURES & F_EXTEND_SINGLE) and depth >= EXTEND_DEPTH
            and ply < MAX_PLY // 2 and extension_allowed(s, depth, ply)):
        extension = 1
    s.extensions[ply + 1] = s.extensions[ply] + extension
    # the hash move alone holds the score: it is searched a ply deeper (PV nodes only)
    singular_move = NO_MOVE
    if (SINGULAR_DEPTH and pv_node and depth >= SINGULAR_DEPTH and ply > 0 and extension == 0
            and tt_move != NO_MOVE and have_entry and e.flag != TT_UPPER
            and e.depth >= depth - 3 and -PLY_SCORE_BOUND < tt_score < PLY_SCORE_BOUND
            and ply < MAX_PLY // 2):
        if singular(s, p, &ml, tt_move, depth, ply, key,
                    tt_score - (SINGULAR_MARGIN * s.man + 50) // 100):
            singular_move = tt_move
        if s.stop:
            return 0

    best = -INF
    best_index = NO_MOVE
    moved = 0
    while True:
        # the moves in order, then those deferred because another thread was searching them
        if k < ml.count:
            i = k
            j = pick(&ml, scores, i)
            tmp = original_index[i]
            original_index[i] = original_index[j]
            original_index[j] = tmp
        elif k - ml.count < n_deferred:
            i = deferred[k - ml.count]
        else:
            break
        k += 1
        m = &ml.moves[i]
        new_depth = depth - 1 + extension
        if original_index[i] == singular_move:
            new_depth += 1
        if new_depth > 0:
            child_key = key_after(p, key, m)
            # the child will probe the table: its bucket's line is on its way while the move
            # is made and the child's draw state worked out
            damka_prefetch(&s.tt[(child_key & s.tt_mask) * 4])
            if coordinate and moved > 0 and k <= ml.count and busy_elsewhere(s, child_key):
                deferred[n_deferred] = i
                n_deferred += 1
                s.deferred += 1
                continue
            s.keys[s.history_len + ply + 1] = child_key
        # (else the child is a quiescence node, which reads neither its key nor the table;
        # coordinate implies depth >= DEFER_DEPTH, so new_depth > 0 whenever it is set)
        make_move(p, m, &child)
        next_draw_state(s, p, m, &child, &s.draw[ply], &s.draw[ply + 1])
        if coordinate:
            busy_mark(s, child_key)
        if moved == 0:
            score = -search(s, &child, new_depth, ply + 1, -beta, -alpha, pv_node)
        else:
            reduction = 0
            if FEATURES & F_LMR:
                if LMR_MODE == 3:
                    # (the hash move is searched first, so it is never here; modes 0-2 exempt
                    # the move at the hash move's generation index instead, as they were
                    # measured. Never when a side has kings only: wins there are manoeuvres,
                    # and the three-kings wins of the tests came a ply later)
                    if (depth >= 2 and not m.captured and not m.promote
                            and both_have_men(p)):
                        reduction = late_move_reduction(depth, moved, pv_node)
                elif depth >= 3 and not m.captured and not m.promote and i != tt_move:
                    reduction = late_move_reduction(depth, moved, pv_node)
            elif (depth >= 3 and moved >= 2 and not m.captured and not m.promote
                    and scores[i] < (1 << 27) and not has_capture(&s.rules, &child)):
                reduction = LMR[depth if depth < 64 else 63][moved if moved < 64 else 63]
                if pv_node and reduction > 0:
                    reduction -= 1
            if LMR_MODE == 3:
                if reduction > new_depth:  # (Scan's: at most into quiescence)
                    reduction = new_depth
            elif reduction >= new_depth:
                reduction = new_depth - 1
            if reduction < 0:
                reduction = 0
            score = -search(s, &child, new_depth - reduction, ply + 1, -alpha - 1, -alpha, 0)
            if score > alpha and reduction > 0:
                score = -search(s, &child, new_depth, ply + 1, -alpha - 1, -alpha, 0)
            if score > alpha and score < beta and pv_node:
                score = -search(s, &child, new_depth, ply + 1, -beta, -alpha, 1)
        if coordinate:
            busy_clear(s, child_key)
        moved += 1
        if s.stop:
            return 0
        if score > best:
            best = score
            best_index = original_index[i]
            if score > alpha:
                alpha = score
                s.pv[ply][0] = m[0]
                for j in range(s.pv_len[ply + 1]):
                    s.pv[ply][j + 1] = s.pv[ply + 1][j]
                s.pv_len[ply] = s.pv_len[ply + 1] + 1
                best_quiet = -1 if m.captured else (m.origin << 8) | m.dest
                quiet_before = n_quiet
                if score >= beta:
                    if not m.captured and HISTORY_MODE == 0:
                        q = quiet_id(m)
                        if s.killers[ply][0] != q:
                            s.killers[ply][1] = s.killers[ply][0]
                            s.killers[ply][0] = q
                        reward_history(s, p.side, m.origin, m.dest, depth * depth)
                        if FEATURES & F_HISTORY_MALUS:
                            for j in range(n_quiet):
                                reward_history(s, p.side, tried_quiet[j] >> 8,
                                               tried_quiet[j] & 0xFF, -depth * depth)
                    break
        if not m.captured:
            tried_quiet[n_quiet] = <uint16_t>((m.origin << 8) | m.dest)
            n_quiet += 1
    if best >= beta:
        flag = TT_LOWER
    elif best > alpha0:
        flag = TT_EXACT
    else:
        flag = TT_UPPER
        if FEATURES & F_TT_KEEP_MOVE:
            best_index = NO_MOVE  # (no move was best: keep the one the table has)
    if HISTORY_MODE == 1 and best_quiet >= 0:
        learn_history(s, p.side, best_quiet, tried_quiet, quiet_before)
    tt_store(s, key, depth, flag, best, best_index, ply)
    return best


cdef inline bint extension_allowed(SearchState* s, int depth, int ply) noexcept nogil:
    """Whether EXTEND_MODE lets a single-move node at ``ply`` be extended."""
    if (EXTEND_MODE & 1) and s.verifying:
        return 0
    if (EXTEND_MODE & 2) and ply > 0 and s.extensions[ply] > s.extensions[ply - 1]:
        return 0
    if (EXTEND_MODE & 4) and 2 * s.extensions[ply] >= ply - s.extensions[ply] + depth:
        return 0
    return 1


cdef void learn_history(SearchState* s, int side, int best, const uint16_t* tried,
                        int count) noexcept nogil:
    """Scan's history: the best move (origin << 8 | dest) moves 1/32 of the way toward
    HISTORY_ONE, each of the ``count`` quiet moves tried before it 1/32 toward 0, so that
    an entry estimates how often its move is the best of those tried (never halved)."""
    cdef int j
    cdef int* h = &s.history[side][best >> 8][best & 0xFF]
    h[0] += (HISTORY_ONE - h[0]) >> 5
    for j in range(count):
        h = &s.history[side][tried[j] >> 8][tried[j] & 0xFF]
        h[0] -= h[0] >> 5


cdef bint singular(SearchState* s, const Pos* p, MoveList* ml, int tt_move, int depth,
                   int ply, uint64_t key, int bound) noexcept nogil:
    """Whether every move but the hash move stays below ``bound`` in a null-window search
    of half the depth (the moves in generation order, before the node's own loop orders
    them; no hash entry for this node is written)."""
    cdef Pos child
    cdef int i, score
    cdef Move* m
    for i in range(ml.count):
        if i == tt_move:
            continue
        m = &ml.moves[i]
        make_move(p, m, &child)
        s.keys[s.history_len + ply + 1] = key_after(p, key, m)
        next_draw_state(s, p, m, &child, &s.draw[ply], &s.draw[ply + 1])
        score = -search(s, &child, depth // 2 - 1, ply + 1, -bound, -bound + 1, 0)
        if s.stop or score >= bound:
            return 0
    return 1


cdef inline int late_move_reduction(int depth, int moved, bint pv_node) noexcept nogil:
    """Plies to take off the ``moved``-th move searched after the first (0-based count of
    those before it) at a node of ``depth``: more for later moves, less at PV nodes."""
    cdef int r
    if LMR_MODE == 1:
        r = LMR[depth if depth < 64 else 63][moved + 1 if moved < 63 else 63]
        if pv_node and r > 0:
            r -= 1
        return r
    if pv_node:
        return 1 if moved >= 3 else 0
    if moved >= (6 if LMR_MODE == 0 else 4):  # Scan 3.1: from the 5th move; 2.0: the 7th
        return 2
    return 1


cdef inline void reward_history(SearchState* s, int side, int origin, int dest,
                                int amount) noexcept nogil:
    s.history[side][origin][dest] += amount
    if s.history[side][origin][dest] > (1 << 19) or s.history[side][origin][dest] < -(1 << 19):
        halve_history(s)


cdef void halve_history(SearchState* s) noexcept nogil:
    cdef int a, b, c
    for a in range(2):
        for b in range(64):
            for c in range(64):
                s.history[a][b][c] //= 2


# ---------------------------------------------------------------------------------------
# Lazy SMP helpers: the same root, deeper and deeper, results only through the shared table

# The scheme bench/smp_speed.py measured best with two threads (time to depth, 5 runs each,
# start and middlegame): threads that defer each other's moves on the main search's iteration,
# 0.44x and 0.51x of one thread's time; the first helper a ply ahead without deferring (the
# scheme before), 0.88x and 0.82x.
cdef bint SMP_DEFER = 1       # threads defer moves another thread is searching
cdef int HELPER_AHEAD = 0      # plies the first helper searches ahead of the main search


def _set_smp_scheme(bint defer, int ahead):
    """Choose the Lazy SMP scheme for the next searches (bench/smp_speed.py compares them):
    whether threads defer moves another is searching, and how many plies the first helper
    keeps ahead of the main search."""
    global SMP_DEFER, HELPER_AHEAD
    SMP_DEFER = defer
    HELPER_AHEAD = ahead


cdef enum:
    HELPER_MAX_DEPTH = 96
    HELPER_WINDOW = 25         # the first aspiration half-width, as engine/search.py's


cdef int skip_depth(int helper, int depth) noexcept nogil:
    """Whether helper ``helper`` leaves out iteration ``depth``. The first never does: it
    searches the main search's iteration with it (see HELPER_AHEAD). The others
    come in groups: two that skip every other depth (one odd, one even), then four that skip
    pairs of depths at four phases, six with runs of three, eight with runs of four; so they
    spread over the next few depths and fill the table for the main search."""
    cdef int j = (helper - 2) % 20
    cdef int run = 1
    if helper == 1:
        return 0
    while j >= 2 * run:
        j -= 2 * run
        run += 1
    return ((depth + j) // run) % 2


cdef bint publish_iteration(SearchState* s, int depth, int score) noexcept nogil:
    """A helper completed iteration ``depth`` with an exact score: publish it, and when the
    main search is still on that iteration (or a shallower one), tell it to take this one
    instead of finishing its own (it gets the result sooner: time to depth). Returns whether
    it told the main search (which then goes on at depth + 1)."""
    cdef int seq = s.done_seq
    damka_store_int(&s.done_seq, seq + 1)
    damka_fence_release()
    s.done_depth = depth
    s.done_score = score
    s.done_pv_len = s.pv_len[0]
    memcpy(s.done_pv, s.pv[0], s.pv_len[0] * sizeof(Move))
    damka_store_release_int(&s.done_seq, seq + 2)
    if s.pv_len[0] > 0 and 2 <= damka_load_int(&s.leader.iteration) <= depth:
        return damka_cas_int(&s.leader.stop, 0, STOP_HELPER_AHEAD)
    return 0


cdef void helper_loop(SearchState* s, const Pos* root) noexcept nogil:
    """Iterative deepening with aspiration windows, as the main search does at its root."""
    cdef int depth = 0, score = 0, last = 0, delta, alpha, beta, leading
    cdef int have_score = 0
    while not s.stop:
        # the main search's iteration (HELPER_AHEAD plies on) or deeper, never a shallower one
        depth += 1
        leading = damka_load_int(&s.leader.iteration) + HELPER_AHEAD
        if depth < leading:
            depth = leading
        while skip_depth(s.helper, depth):
            depth += 1
        if depth > HELPER_MAX_DEPTH or depth > damka_load_int(&s.leader.depth_limit):
            break
        alpha, beta = -INF, INF
        delta = HELPER_WINDOW
        if depth >= 5 and have_score and -MATE_BOUND < last < MATE_BOUND:
            alpha, beta = last - delta, last + delta
        s.helper_depth = depth
        while True:
            score = search(s, root, depth, 0, alpha, beta, 1)
            if s.stop:
                break
            if score <= alpha and alpha > -INF:
                beta = (alpha + beta) // 2
                alpha = score - delta if score - delta > -INF else -INF
            elif score >= beta and beta < INF:
                beta = score + delta if score + delta < INF else INF
            else:
                break
            delta *= 2
            if delta > 400:
                alpha, beta = -INF, INF
        if s.stop:
            if damka_cas_int(&s.stop, STOP_STALE, 0):
                continue  # on at a depth beyond the main search's
            return
        have_score, last = 1, score
        if publish_iteration(s, depth, score):
            depth += HELPER_AHEAD  # the main search goes on at depth + 1: keep ahead of it


# ---------------------------------------------------------------------------------------
# The Python side: the root is driven from engine/search.py

cdef class Searcher:
    """One search instance: rules, evaluation, draw counters and a transposition table."""

    cdef SearchState* s
    cdef CoreRules core
    cdef Pos root
    cdef MoveList root_moves
    cdef PathList root_paths
    cdef readonly int hash_mb
    cdef object learned_core
    cdef bint owns_table        # False for a helper, whose table is its main Searcher's
    cdef object table_owner     # that main Searcher, kept alive while its table is used
    cdef size_t table_bytes     # the size of its own table
    cdef readonly bint table_fresh  # its own table is still all zero: nothing to clear
    cdef object egtb_solver
    cdef uint64_t* busy_table   # main: the positions its threads are searching (see follow)

    def __cinit__(self):
        self.s = <SearchState*>calloc(1, sizeof(SearchState))
        if self.s == NULL:
            raise MemoryError()

    def __dealloc__(self):
        if self.s != NULL:
            if self.owns_table:
                damka_table_free(self.s.tt, self.table_bytes)
            free(self.busy_table)
            free(self.s)
            self.s = NULL

    def __init__(self, CoreRules core, str eval_name, int hash_mb=64, int king_moves=0,
                 int no_progress=0, int endgame_three=0, int endgame_two=0):
        """Draw-rule counts are in moves by each side (0 = the rule does not exist).
        ``hash_mb`` 0: no table of its own (a helper, which uses its main Searcher's)."""
        self.core = core
        self.s.rules = core.rules
        init_eval(&self.s.eval, eval_name.encode("ascii"), &core.rules)
        self.s.man = 100
        self.s.draws.king_moves_plies = 2 * king_moves
        self.s.draws.no_progress_plies = 2 * no_progress
        self.s.draws.endgame_three_plies = 2 * endgame_three
        self.s.draws.endgame_two_plies = 2 * endgame_two
        if hash_mb != 0:
            self.resize(hash_mb)

    def set_evaluation(self, EvalCore learned=None):
        """Use the learned evaluation of ``learned`` (weights loaded), or with None the
        hand-written one. The EvalCore is shared read-only."""
        if learned is None:
            self.s.learned = NULL
        else:
            if not learned.has_weights:
                raise ValueError("the learned evaluation has no weights")
            if learned.size != self.core.size:
                raise ValueError("the learned evaluation is for another board size")
            self.s.learned = &learned.e
        self.learned_core = learned
        forget_scores(self.s)

    def set_man_worth(self, int units):
        """A man in the evaluation's units: the pruning margins are set in fractions of it."""
        self.s.man = units if units > 0 else 100

    def set_egtb(self, Solver solver=None, int pieces=0):
        """Probe the tables registered on ``solver`` at interior nodes with at most
        ``pieces`` pieces (None: no probing). The solver is shared read-only."""
        if solver is None or pieces < 2:
            self.s.egtb = NULL
            self.egtb_solver = None
            return
        self.egtb_solver = solver
        self.s.egtb = &solver.lk
        self.s.egtb_pieces = pieces

    def resize(self, int hash_mb):
        """Allocate the transposition table: the largest power of two of buckets that fits."""
        cdef uint64_t buckets = 1
        if hash_mb < 1:
            hash_mb = 1
        if not self.owns_table:
            self.s.tt = NULL
            self.table_owner = None
        while buckets * 2 * 64 <= (<uint64_t>hash_mb) * 1024 * 1024:
            buckets *= 2
        if self.owns_table:
            damka_table_free(self.s.tt, self.table_bytes)
        self.s.tt = NULL
        self.owns_table = False
        self.s.tt = <TTEntry*>damka_table_alloc(buckets * 4 * sizeof(TTEntry))
        if self.s.tt == NULL:
            raise MemoryError(f"cannot allocate a {hash_mb} MB hash table")
        self.table_bytes = buckets * 4 * sizeof(TTEntry)
        self.s.tt_mask = buckets - 1
        self.hash_mb = hash_mb
        self.owns_table = True
        self.table_fresh = True

    def touch_table(self):
        """Bring every page of its own hash table into memory now (the first search would
        otherwise take the page faults). Safe while searches use the table; holds no GIL, so
        it can run on a thread of its own."""
        if not self.owns_table or self.s.tt == NULL:
            return
        with nogil:
            damka_table_touch(self.s.tt, self.table_bytes)

    def clear(self):
        """Forget everything learned: hash table (its own: not a helper's), killers and
        history (a new game)."""
        if self.owns_table and not self.table_fresh:
            memset(self.s.tt, 0, self.table_bytes)
            self.table_fresh = True
        memset(self.s.killers, 0, sizeof(self.s.killers))
        memset(self.s.history, 0, sizeof(self.s.history))

    def key(self, white, black, kings, bint white_to_move):
        """The Zobrist key of a position (for the game history handed to set_position)."""
        cdef Pos p
        self.core.load(&p, white, black, kings, white_to_move)
        return position_key(&p)

    def set_position(self, white, black, kings, bint white_to_move, history=(),
                     int reversible=0, int no_progress=0, int endgame=0):
        """The position to search, the keys of the earlier game positions (oldest first) and
        the draw counters in plies: king-only moves in a row, plies without capture or
        crowning, plies since the current endgame rule began. Returns the root moves."""
        cdef int i, n
        self.core.load(&self.root, white, black, kings, white_to_move)
        history = list(history)[-(MAX_HISTORY - 1):]
        n = len(history)
        for i in range(n):
            self.s.keys[i] = <uint64_t>history[i]
        self.s.history_len = n
        self.s.keys[n] = position_key(&self.root)
        self.s.draw[0].reversible = reversible
        self.s.draw[0].no_progress = no_progress
        self.s.draw[0].endgame_kind = endgame_kind(&self.root) if self.s.draws.endgame_three_plies else 0
        self.s.draw[0].endgame = endgame
        self.s.age = (self.s.age + 1) & 63
        memset(self.s.killers, 0, sizeof(self.s.killers))
        generate(&self.s.rules, &self.root, &self.root_moves, &self.root_paths)
        return [self.core.move_tuple(&self.root_moves.moves[i], &self.root_paths, i)
                for i in range(self.root_moves.count)]

    def follow(self, Searcher main, int helper):
        """Make this Searcher helper number ``helper`` (1, 2, ...) of ``main`` for its next
        search: main's root, game history, draw counters, evaluation and hash table, with
        killers cleared and the node count and stop flag reset. Call after main's
        set_position, before run_helper; main's table must outlive the search."""
        cdef SearchState* s = self.s
        cdef SearchState* m = main.s
        if helper < 1:
            raise ValueError("helpers are numbered from 1")
        if m.tt == NULL:
            raise ValueError("the main Searcher has no hash table")
        if self.owns_table:
            damka_table_free(s.tt, self.table_bytes)
            self.owns_table = False
        main.table_fresh = False
        s.tt = m.tt
        s.tt_mask = m.tt_mask
        s.age = m.age
        self.table_owner = main
        self.hash_mb = main.hash_mb
        self.core = main.core
        s.rules = m.rules
        s.eval = m.eval
        s.learned = m.learned
        self.learned_core = main.learned_core
        forget_scores(s)
        s.egtb = m.egtb
        s.egtb_pieces = m.egtb_pieces
        s.man = m.man
        self.egtb_solver = main.egtb_solver
        s.draws = m.draws
        memcpy(s.keys, m.keys, (m.history_len + 1) * sizeof(uint64_t))
        s.history_len = m.history_len
        s.draw[0] = m.draw[0]
        self.root = main.root
        if SMP_DEFER:
            if main.busy_table == NULL:
                main.busy_table = <uint64_t*>calloc(BUSY_SLOTS, sizeof(uint64_t))
                if main.busy_table == NULL:
                    raise MemoryError()
            elif helper == 1:
                memset(main.busy_table, 0, BUSY_SLOTS * sizeof(uint64_t))
            m.busy = main.busy_table
        s.busy = m.busy
        s.helper = helper
        s.helper_depth = 0
        s.leader = m
        s.done_seq = 0
        s.done_depth = 0
        s.done_pv_len = 0
        memset(s.killers, 0, sizeof(s.killers))
        s.nodes = 0
        s.deferred = 0
        s.stop = 0
        s.sel_depth = 0
        s.deadline = 0
        s.node_limit = 0

    def run_helper(self):
        """Search the followed root deeper and deeper until stop() (or the deepest depth),
        leaving the results in the shared table. Blocks: run it on a thread of its own; it
        holds no GIL while it searches."""
        if self.s.helper < 1 or self.s.tt == NULL:
            raise RuntimeError("run_helper needs follow() first")
        with nogil:
            helper_loop(self.s, &self.root)

    def root_is_draw(self):
        """Whether the root position is already drawn by a move-count rule or repetition."""
        return bool(is_draw(self.s, 0))

    def start(self, double deadline=0.0, uint64_t node_limit=0):
        """Reset the node count and stop flag; deadline is an absolute monotonic time."""
        self._written()
        self.s.iteration = 0
        self.s.depth_limit = HELPER_MAX_DEPTH
        self.s.busy = NULL  # (one thread, until follow() gives it helpers)
        self.s.deferred = 0
        self.s.verifying = 0
        self.s.nodes = 0
        self.s.stop = 0
        self.s.sel_depth = 0
        self.s.deadline = deadline
        self.s.node_limit = node_limit
        forget_scores(self.s)

    cdef void _written(self):
        """The table is about to be written: clear() has work to do again."""
        if self.owns_table:
            self.table_fresh = False
        elif self.table_owner is not None:
            (<Searcher>self.table_owner).table_fresh = False

    def set_iteration(self, int depth):
        """The main search begins iteration ``depth``: its helpers go deeper from now on."""
        damka_store_int(&self.s.iteration, depth)

    def set_depth_limit(self, int depth):
        """The main search goes no deeper than ``depth``: nor do its helpers."""
        damka_store_int(&self.s.depth_limit, depth)

    def set_deadline(self, double deadline):
        self.s.deadline = deadline

    def set_node_limit(self, uint64_t node_limit):
        self.s.node_limit = node_limit

    def stop(self):
        """Ask the running search to stop; safe from any thread."""
        self.s.stop = 1

    @property
    def stopped(self):
        """Whether the search was interrupted: stopped, or told that a helper is ahead
        (take_helper_ahead tells which)."""
        return bool(self.s.stop)

    def take_helper_ahead(self):
        """If the search was interrupted only because a helper completed the iteration it
        was on, clear that and return True (the search may go on); else False."""
        return bool(damka_cas_int(&self.s.stop, STOP_HELPER_AHEAD, 0))

    @property
    def helper_depth(self):
        """The iteration this helper is searching (0 before its first)."""
        return damka_load_int(&self.s.helper_depth)

    def helper_iteration(self, Searcher helper):
        """The deepest iteration ``helper`` has completed in this search, as (depth, score,
        root move index, pv) with the pv as pv() gives it; None when it has completed none
        (or its line does not start with one of this root's moves)."""
        cdef SearchState* h = helper.s
        cdef int seq, depth = 0, score = 0, n = 0, tries, i
        cdef Move line[MAX_PLY]
        cdef Move* m
        for tries in range(1000):
            seq = damka_load_acquire_int(&h.done_seq)
            if seq & 1:
                continue
            depth = h.done_depth
            score = h.done_score
            n = h.done_pv_len
            if n < 0 or n > MAX_PLY:
                continue
            memcpy(line, h.done_pv, n * sizeof(Move))
            damka_fence_acquire()
            if damka_load_int(&h.done_seq) == seq:
                break
        else:
            return None
        if depth < 1 or n < 1:
            return None
        for i in range(self.root_moves.count):
            m = &self.root_moves.moves[i]
            if m.origin == line[0].origin and m.dest == line[0].dest \
                    and m.captured == line[0].captured:
                break
        else:
            return None
        pv = [(self.core.square(line[k].origin), self.core.square(line[k].dest),
               self.core.from_bits(line[k].captured), bool(line[k].promote)) for k in range(n)]
        return depth, score, i, pv

    @property
    def nodes(self):
        return self.s.nodes

    @property
    def deferred(self):
        """Moves this search put off because another of its threads was searching them."""
        return self.s.deferred

    @property
    def sel_depth(self):
        return self.s.sel_depth

    @staticmethod
    def now():
        """The monotonic clock the deadlines use, in seconds."""
        return damka_now()

    def search_move(self, int index, int depth, int alpha, int beta, bint pv=True):
        """Score of root move ``index`` searched to ``depth`` plies (the move included) in
        the window (alpha, beta), from the root side's point of view. 0 if stopped.
        ``pv`` False: a scout (a null window, to be searched again if it beats alpha), whose
        line is searched as a non-PV node."""
        cdef Pos child
        cdef Move* m
        cdef int score
        cdef uint64_t child_key
        cdef bint coordinate
        self._written()
        if not 0 <= index < self.root_moves.count:
            raise IndexError("no such root move")
        m = &self.root_moves.moves[index]
        make_move(&self.root, m, &child)
        self.s.keys[self.s.history_len + 1] = key_after(&self.root, self.s.keys[self.s.history_len], m)
        next_draw_state(self.s, &self.root, m, &child, &self.s.draw[0], &self.s.draw[1])
        child_key = self.s.keys[self.s.history_len + 1]
        coordinate = self.s.busy != NULL and depth >= DEFER_DEPTH
        with nogil:
            if coordinate:
                busy_mark(self.s, child_key)
            score = -search(self.s, &child, depth - 1, 1, -beta, -alpha,
                            1 if pv or not (FEATURES & F_ROOT_SCOUT) else 0)
            if coordinate:
                busy_clear(self.s, child_key)
        self.s.pv[0][0] = m[0]
        for i in range(self.s.pv_len[1]):
            self.s.pv[0][i + 1] = self.s.pv[1][i]
        self.s.pv_len[0] = self.s.pv_len[1] + 1
        return score

    def root_reduction(self, int index, int moved, int depth):
        """Plies to take off the scout of root move ``index``, the ``moved``-th searched
        (0-based) in an iteration of ``depth``: one for a quiet move from the ROOT_LMR-th on,
        as the helpers' roots and every PV node below get (none while ROOT_LMR is 0). Not
        when a side has kings only: a win there is a manoeuvre, found a ply later if its
        first move is reduced (as the forward pruning leaves such positions alone)."""
        cdef Move* m
        if not 0 <= index < self.root_moves.count:
            raise IndexError("no such root move")
        if ROOT_LMR == 0 or moved + 1 < ROOT_LMR or depth < 3 or not both_have_men(&self.root):
            return 0
        m = &self.root_moves.moves[index]
        if m.captured or m.promote:
            return 0
        return 1

    def pv(self):
        """The principal variation of the last search_move call: a list of
        (origin, destination, captured_mask, promotes) in internal squares."""
        out = []
        cdef int i
        cdef Move* m
        for i in range(self.s.pv_len[0]):
            m = &self.s.pv[0][i]
            out.append((self.core.square(m.origin), self.core.square(m.dest),
                        self.core.from_bits(m.captured), bool(m.promote)))
        return out

    def store_root(self, int depth, int score, int best_index):
        """Record the root result in the hash table so the next iteration starts from it."""
        self._written()
        tt_store(self.s, self.s.keys[self.s.history_len], depth, TT_EXACT, score, best_index, 0)

    def hash_move(self):
        """The index of the hash table's best root move, or -1."""
        cdef TTData e
        if (not tt_probe(self.s, self.s.keys[self.s.history_len], &e)
                or e.move >= self.root_moves.count):
            return -1
        return e.move

    def evaluate(self):
        """Static evaluation of the root position, side to move's point of view."""
        forget_scores(self.s)
        return static_eval(self.s, &self.root)

    def quiesce(self, bint threats=False):
        """Quiescence score of the root position (captures resolved); with ``threats`` as at
        the search's horizon, where a quiet position under a capture threat is searched a ply."""
        self.start()
        cdef int score
        with nogil:
            score = quiesce(self.s, &self.root, 0, -INF, INF, threats)
        return score


def table_stress(Searcher searcher, uint64_t seed, int rounds, int keys=8):
    """Test hook for the lockless table: ``rounds`` stores and probes, on this thread without
    the GIL, of ``keys`` keys (chosen by ``seed``'s stream) crowded into one bucket, each
    stored with data made from its key. Returns (hits, bad): probes that found their key, and
    those of them whose data was not that key's (a torn entry accepted as valid)."""
    cdef uint64_t state = seed
    cdef uint64_t k, key
    cdef int64_t hits = 0, bad = 0
    cdef int i, score, depth, flag, move
    cdef TTData e
    cdef SearchState* s = searcher.s
    if s.tt == NULL or keys < 1:
        raise ValueError("table_stress needs a Searcher with a table and at least one key")
    searcher._written()
    with nogil:
        for i in range(rounds):
            k = splitmix(&state) % <uint64_t>keys
            key = stress_key(k) & ~s.tt_mask
            stress_data(key, &score, &depth, &flag, &move)
            if splitmix(&state) & 1:
                tt_store(s, key, depth, flag, score, move, 0)
            elif tt_probe(s, key, &e):
                hits += 1
                if e.score != score or e.depth != depth or e.flag != flag or e.move != move:
                    bad += 1
    return hits, bad


def table_half_written(Searcher searcher, uint64_t key_a, uint64_t key_b):
    """Test hook: store an entry for ``key_a``, then overwrite only its data word with the
    data of an entry for ``key_b`` (a writer of ``key_b`` caught between its two words), and
    probe both keys. Returns (found_a, found_b): a sound table finds neither."""
    cdef SearchState* s = searcher.s
    cdef TTData e
    cdef TTEntry* bucket
    cdef int score, depth, flag, move, i, found_a, found_b
    if s.tt == NULL:
        raise ValueError("table_half_written needs a Searcher with a table")
    searcher._written()
    key_b = (key_b & ~s.tt_mask) | (key_a & s.tt_mask)  # the same bucket
    bucket = &s.tt[(key_a & s.tt_mask) * 4]
    stress_data(key_a, &score, &depth, &flag, &move)
    tt_store(s, key_a, depth, flag, score, move, 0)
    stress_data(key_b, &score, &depth, &flag, &move)
    for i in range(4):
        if tt_read(&bucket[i], key_a, &e):
            damka_store64(&bucket[i].data, pack_data(score, depth, flag, s.age, move))
    found_a = tt_probe(s, key_a, &e)
    found_b = tt_probe(s, key_b, &e)
    return bool(found_a), bool(found_b)


cdef inline uint64_t stress_key(uint64_t k) noexcept nogil:
    cdef uint64_t state = k * 0x9E3779B97F4A7C15ULL + 1
    return splitmix(&state)


cdef inline void stress_data(uint64_t key, int* score, int* depth, int* flag,
                             int* move) noexcept nogil:
    score[0] = <int>((key >> 20) % 20000) - 10000
    depth[0] = 1 + <int>((key >> 40) % 60)
    flag[0] = 1 + <int>((key >> 50) % 3)
    move[0] = <int>((key >> 56) & 0x7F)


MATE_SCORE = MATE
#: bytes of one search's state (stacks, killers, history): what each helper thread allocates
STATE_BYTES = sizeof(SearchState)
MATE_THRESHOLD = MATE_BOUND
EGTB_WIN = TB_WIN
INFINITY = INF
