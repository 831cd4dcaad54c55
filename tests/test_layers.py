"""The package's import graph: layers import downward only, and no two modules import each other.

Every import counts, function-level ones included: the graph is read from the source with ``ast``.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "pdbtool"

# lower layers first; a module may import its own layer (acyclically) and the layers below it
LAYERS = [
    {"pdbtool.errors", "pdbtool._version", "pdbtool._native", "pdbtool.registry", "pdbtool.domains",
     "pdbtool.files", "pdbtool.processes"},
    {"pdbtool.puzzle"},
    {"pdbtool.tables"},
    {"pdbtool.heuristics"},
    {"pdbtool.search"},
    {"pdbtool.analysis"},
    {"pdbtool.plan"},
    {"pdbtool.hanoi4", "pdbtool.vcover", "pdbtool.msa"},
    {"pdbtool.cli", "pdbtool.batch", "pdbtool.vcover.commands", "pdbtool.msa.commands"},
    {"pdbtool", "pdbtool.__main__"},
]


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports_of(path: Path) -> set[str]:
    """Every pdbtool module that ``path`` imports, anywhere in its body."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "pdbtool")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            elif node.module and node.module.split(".")[0] == "pdbtool":
                target = node.module
            else:
                continue
            # `from X import name` imports X.name when that is a module
            for alias in node.names:
                sub = f"{target}.{alias.name}"
                found.add(sub if _is_module(sub) else target)
    found.discard(name)
    return found


def _is_module(dotted: str) -> bool:
    rel = Path(*dotted.split("."))
    return (PACKAGE.parent / rel).with_suffix(".py").exists() or (PACKAGE.parent / rel / "__init__.py").exists()


def layer_of(module: str) -> int:
    parts = module.split(".")
    if len(parts) == 3 and parts[2] == "commands":  # a domain's commands (pdbtool/<package>/commands.py): the CLI
        return layer_of("pdbtool.cli")
    best = None
    for i, names in enumerate(LAYERS):
        for prefix in names:
            if (module == prefix or module.startswith(prefix + ".")) and (best is None or len(prefix) > best[1]):
                best = (i, len(prefix))
    assert best is not None, f"{module} belongs to no layer: add it to LAYERS"
    return best[0]


def graph() -> dict[str, set[str]]:
    return {module_name(p): imports_of(p) for p in sorted(PACKAGE.rglob("*.py"))}


def test_every_import_points_down_or_sideways():
    upward = [f"{m} -> {t}" for m, targets in graph().items() for t in sorted(targets)
              if layer_of(t) > layer_of(m)
              # a package's __init__ may re-export from its own modules
              and not (t.startswith(m + ".") and (PACKAGE.parent / Path(*m.split(".")) / "__init__.py").exists())]
    assert not upward, "imports reaching up a layer:\n" + "\n".join(upward)


def test_no_import_cycles():
    g = graph()
    state: dict[str, int] = {}
    cycles = []

    def visit(m, path):
        state[m] = 1
        for t in sorted(g.get(m, ())):
            if t not in g:
                continue
            if state.get(t) == 1:
                cycles.append(" -> ".join(path[path.index(t):] + [t]))
            elif t not in state:
                visit(t, path + [t])
        state[m] = 2

    for m in sorted(g):
        if m not in state:
            visit(m, [m])
    # a package importing its own submodule is not a cycle unless the submodule imports the package back
    assert not cycles, "import cycles:\n" + "\n".join(cycles)


def test_the_checker_sees_an_upward_import(tmp_path):
    """The graph reader finds function-level and relative imports (so the tests above can fail)."""
    src = tmp_path / "m.py"
    src.write_text("def f():\n    from ..search import solver\n")
    fake = PACKAGE / "tables" / "_probe_layers.py"
    try:
        fake.write_text(src.read_text())
        assert "pdbtool.search.solver" in imports_of(fake)
        assert layer_of("pdbtool.search.solver") > layer_of(module_name(fake))
    finally:
        fake.unlink()


@pytest.mark.parametrize("argv", [["--help"], ["solve", "--help"], ["build", "--help"], ["verify", "--help"],
                                  ["inspect", "--help"], ["convert", "--help"],
                                  ["solve", "--domain", "hanoi4", "--help"]])
def test_help_does_not_import_numba(argv):
    code = ("import sys\nfrom pdbtool.cli import main\n"
            f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
            "print('NUMBA' if 'numba' in sys.modules else 'LIGHT')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().endswith("LIGHT"), out
