"""Builds the Cython core in _fast/ (the rest of the package is plain Python).

Linux and macOS, with GCC or Clang: the core's threads share the hash table through the GNU C
atomic builtins (``__atomic_*`` in _fast/search.pyx), which MSVC lacks, so Windows is not
supported and the build says so at once instead of failing in the compiler.

-O3 by default and no -march=native: a wheel tuned to this CPU dies with "Illegal
instruction" elsewhere. Set DAMKA_NATIVE=1 to opt in to native tuning for a local build.
"""

import os
import platform
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

if sys.platform == "win32":
    sys.exit("damka's Cython core builds on Linux and macOS (GCC or Clang) only: it uses the "
             "GNU C atomic builtins, which MSVC lacks")

compile_args = ["-O3", "-fno-strict-aliasing"]
if os.environ.get("DAMKA_NATIVE") == "1":
    compile_args.append("-march=native")
elif platform.machine().lower() in ("x86_64", "amd64"):
    # POPCNT and friends are in every x86-64 CPU of the last 15 years (x86-64-v2).
    compile_args.append("-mpopcnt")

MODULES = ["movegen", "evaluate", "learned", "search", "egtb"]

extensions = [
    Extension(f"_fast.{name}", [f"_fast/{name}.pyx"], extra_compile_args=compile_args)
    for name in MODULES
]

setup(
    ext_modules=cythonize(
        extensions,
        compiler_directives={
            "language_level": "3",
            "boundscheck": False,
            "wraparound": False,
            "cdivision": True,
            "initializedcheck": False,
        },
    ),
)
