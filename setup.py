"""Builds the Cython core in _fast/ (the rest of the package is plain Python).

-O3 by default and no -march=native: a wheel tuned to this CPU dies with "Illegal
instruction" elsewhere. Set DAMKA_NATIVE=1 to opt in to native tuning for a local build.
"""

import os
import sys

from Cython.Build import cythonize
from setuptools import Extension, setup

compile_args = []
if sys.platform != "win32":
    compile_args = ["-O3", "-fno-strict-aliasing"]
    if os.environ.get("DAMKA_NATIVE") == "1":
        compile_args.append("-march=native")
    else:
        # POPCNT and friends are in every x86-64 CPU of the last 15 years (x86-64-v2).
        import platform

        if platform.machine().lower() in ("x86_64", "amd64"):
            compile_args.append("-mpopcnt")
else:
    compile_args = ["/O2"]

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
