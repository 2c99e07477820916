# The endgame databases' C types, shared with the search (which probes through ``lookup``).

from libc.stdint cimport uint64_t, uint8_t

from _fast.movegen cimport Rules, Pos

ctypedef struct Geometry:
    int size
    int nsq
    int half
    int bit_of[64]      # square -> bit
    int sq_of[64]       # bit -> square (-1 for ghost bits)
    int flip[64]        # bit -> bit of the square turned 180 degrees
    uint64_t valid      # bits of the real squares
    int top             # the highest real bit: turning the board maps bit b to top - b


ctypedef struct Dims:
    uint64_t nwm, nbm, nwk, nbk, total


ctypedef struct Lookup:
    const Geometry* g
    uint8_t** tables     # per signature id, NULL when not loaded
    Dims* dims           # per signature id



cdef int lookup(const Lookup* lk, const Pos* child) noexcept nogil


cdef class Solver:
    cdef Rules rules
    cdef Geometry geo
    cdef uint8_t* tables[4096]
    cdef Dims dims[4096]
    cdef object _arrays
    cdef Lookup lk
    cdef uint64_t _bits(self, uint64_t squares) except? 0
    cdef uint64_t _squares(self, uint64_t bits) noexcept
    cdef int _load(self, Pos* p, uint64_t white, uint64_t black, uint64_t kings,
                   bint white_to_move) except -1
