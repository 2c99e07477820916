"""Bit tricks on 64-bit boards, written once for every module of the core: the population
count and the index of the lowest set bit, with the compiler's intrinsics (one instruction
each with -mpopcnt). A module cimports them: ``from _fast.bits cimport popcount, lsb``."""

cdef extern from *:
    """
    #ifndef DAMKA_BITS_H
    #define DAMKA_BITS_H
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int damka_popcount(unsigned long long x) { return (int)__popcnt64(x); }
    static inline int damka_lsb(unsigned long long x) { unsigned long i; _BitScanForward64(&i, x); return (int)i; }
    #else
    static inline int damka_popcount(unsigned long long x) { return __builtin_popcountll(x); }
    static inline int damka_lsb(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    #endif
    """
    int popcount "damka_popcount"(unsigned long long x) noexcept nogil
    int lsb "damka_lsb"(unsigned long long x) noexcept nogil
