"""The layering: protocol -> engine -> _fast, one direction, no cycles (docs/architecture.md).

Every import is read from the source (module level and inside functions alike), so an import
that runs only on one code path still counts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGES = ("engine", "protocol", "_fast")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _python_modules() -> dict[str, Path]:
    return {_module_name(p): p for pkg in PACKAGES for p in (REPO / pkg).rglob("*.py")}


def _resolve(module: str, is_package: bool, level: int, target: str | None) -> str:
    if level == 0:
        return target or ""
    base = module.split(".")
    if not is_package:
        base = base[:-1]
    base = base[: len(base) - (level - 1)]
    return ".".join(base + ([target] if target else []))


def _imports(module: str, path: Path, known: set[str]) -> set[str]:
    """The project modules that ``module`` imports (``from pkg import sub`` counts sub)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, path.name == "__init__.py", node.level, node.module)
            names = [base] + [f"{base}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            # importing a.b.c also runs a and a.b
            parts = name.split(".")
            for i in range(1, len(parts) + 1):
                prefix = ".".join(parts[:i])
                if prefix in known and prefix != module:
                    found.add(prefix)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _python_modules()
    known = set(modules)
    return {name: _imports(name, path, known) for name, path in modules.items()}


def test_the_graph_sees_real_imports() -> None:
    graph = _graph()
    assert "engine.board" in graph["engine.search"]
    assert "protocol.hub.text" in graph["protocol.hub.server"]
    assert "engine.search" in graph["protocol.match.engines"]  # a lazy import inside a function


def test_engine_never_imports_protocol() -> None:
    offenders = {m: sorted(i for i in deps if i.startswith("protocol"))
                 for m, deps in _graph().items() if m.startswith("engine")}
    assert {m: d for m, d in offenders.items() if d} == {}


@pytest.mark.parametrize("suffix", ["*.pyx", "*.pxd", "*.py"])
def test_fast_imports_neither_engine_nor_protocol(suffix: str) -> None:
    pattern = re.compile(r"^\s*(from|import|cimport)\s+(engine|protocol)\b", re.MULTILINE)
    bad = [str(p.relative_to(REPO)) for p in (REPO / "_fast").glob(suffix)
           if pattern.search(p.read_text())]
    assert bad == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def visit(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_planted_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles() -> None:
    # a package's __init__ importing its own submodules is the normal way to re-export them,
    # and a submodule importing its package __init__ is implied by Python itself: those edges
    # are left out, every other pair of modules importing each other is a cycle
    graph = {m: {d for d in deps if not (m.startswith(d + ".") or d.startswith(m + "."))}
             for m, deps in _graph().items()}
    assert _cycles(graph) == []


def _subpackage_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """Imports between the subpackages of ``protocol`` (``protocol.dxp``, ``protocol.match``
    ...): an edge for every module of one importing a module of another."""
    subpackages = {p.name for p in (REPO / "protocol").iterdir() if (p / "__init__.py").exists()}

    def owner(module: str) -> str | None:
        parts = module.split(".")
        return parts[1] if len(parts) > 1 and parts[0] == "protocol" and parts[1] in subpackages \
            else None

    out: dict[str, set[str]] = {name: set() for name in subpackages}
    for module, deps in graph.items():
        source = owner(module)
        if source is None:
            continue
        out[source] |= {target for d in deps if (target := owner(d)) not in (None, source)}
    return out


def test_protocol_subpackages_form_a_dag() -> None:
    """No two subpackages of ``protocol`` import each other, directly or round a longer loop
    (the DXP match player lives with the other match players, not in ``dxp``)."""
    graph = _subpackage_graph(_graph())
    assert "dxp" in graph["match"]  # the graph sees the match runner's use of DXP
    assert _cycles(graph) == []


def test_ci_runs_the_readme_commands_verbatim() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    quick_start = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", quick_start, re.DOTALL)
    assert len(commands) == 2  # install and analyse; install the test extras and test
    ci_lines = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for command in commands:
        assert command.strip() in ci_lines


def test_no_test_reads_data_outside_the_repository() -> None:
    outside = [p.name for p in (REPO / "tests").glob("*.py")
               if re.search(r"parents\[2\]|\.\./shared|\"shared\"", p.read_text(encoding="utf-8"))]
    assert outside == []


def test_every_package_is_installed():
    """pyproject lists the packages by name, so a new subpackage missing from the list works
    in a checkout and is absent from an install (``pip install .``): every folder with an
    ``__init__.py`` under the three layers must be listed."""
    import tomllib

    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(init.parent.relative_to(REPO).parts)
        for layer in ("_fast", "engine", "protocol")
        for init in (REPO / layer).rglob("__init__.py")
    }
    assert found - listed == set(), "packages missing from pyproject.toml"
