"""No module imports another package's private module (``toolaudit.x._y`` from outside
``toolaudit.x``): the import graph of ``src/`` is walked with ``ast``, including module
names passed to ``importlib.import_module`` and registry strings."""

from __future__ import annotations

import ast
import re
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
_MODULE_STRING = re.compile(r"^(toolaudit(?:\.\w+)+)(?::\w+)?$")


def _package_of(path: Path, root: Path) -> str:
    parts = path.relative_to(root).with_suffix("").parts
    # toolaudit/x/... -> "x"; toolaudit/__init__.py and toolaudit/errors.py -> ""
    return parts[1] if len(parts) > 2 else ""


def _imported(tree: ast.AST) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append((node.lineno, node.module))
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _MODULE_STRING.match(node.value)
            if m:
                out.append((node.lineno, m.group(1)))
    return out


def private_reach_throughs(root: Path) -> list[str]:
    """``file:line module`` for every import of another package's private module/name."""
    found: list[str] = []
    for path in sorted(root.rglob("*.py")):
        own = _package_of(path, root)
        for line, module in sorted(_imported(ast.parse(path.read_text(encoding="utf-8")))):
            parts = module.split(".")
            if parts[0] != "toolaudit" or len(parts) < 3 or parts[1] == own:
                continue
            if parts[2].startswith("_") and not parts[2].startswith("__"):
                found.append(f"{path.relative_to(root)}:{line} {module}")
    return found


def test_src_has_no_cross_package_private_import() -> None:
    assert private_reach_throughs(SRC) == []


def test_checker_finds_a_planted_reach_through(tmp_path: Path) -> None:
    pkg = tmp_path / "toolaudit"
    (pkg / "stats").mkdir(parents=True)
    (pkg / "leakage").mkdir()
    (pkg / "stats" / "_fast.py").write_text("X = 1\n")
    (pkg / "stats" / "__init__.py").write_text("from toolaudit.stats._fast import X\n")
    (pkg / "leakage" / "a.py").write_text(
        "from toolaudit.stats import X\nfrom toolaudit.stats._fast import X as Y\n"
    )
    (pkg / "leakage" / "b.py").write_text(
        "import importlib\nm = importlib.import_module('toolaudit.stats._fast')\n"
        "from toolaudit.stats import _hidden\n"
    )
    assert private_reach_throughs(tmp_path) == [
        "toolaudit/leakage/a.py:2 toolaudit.stats._fast",
        "toolaudit/leakage/a.py:2 toolaudit.stats._fast.X",
        "toolaudit/leakage/b.py:2 toolaudit.stats._fast",
        "toolaudit/leakage/b.py:3 toolaudit.stats._hidden",
    ]


#: Modules that were merged or renamed: nothing may bring them back under the old name
#: (toolaudit.runs holds the resume mechanism; the judge modules say what they hold).
REMOVED = (
    "cli/_resume.py",
    "probes/_judge.py",
    "probes/_judging.py",
    "traces/_inspect.py",
    "traces/_demo.py",
    "datasets/_demo.py",
    "redaction/_demo.py",
)


def test_removed_modules_stay_removed() -> None:
    root = SRC / "toolaudit"
    assert [m for m in REMOVED if (root / m).exists()] == []
    names = {m.removesuffix(".py").replace("/", ".") for m in REMOVED}
    found = [
        f"{path.relative_to(SRC)}:{line} {module}"
        for path in sorted(SRC.rglob("*.py"))
        for line, module in _imported(ast.parse(path.read_text(encoding="utf-8")))
        if module.removeprefix("toolaudit.") in names
    ]
    assert found == []


def test_no_demo_hooks_beside_the_audit_contracts() -> None:
    """The demo reaches every audit through its contract (``run_audit``); the old
    ``demo_sections`` hooks are gone and stay gone."""
    hits = [
        str(p.relative_to(SRC)) for p in SRC.rglob("*.py") if "def demo_sections" in p.read_text()
    ]
    assert hits == []


def import_circles(root: Path) -> list[list[str]]:
    """Sets of modules that import each other in a circle (any import, also inside a
    function or under TYPE_CHECKING), each sorted, as strongly connected components of
    the graph of ``toolaudit.x._y`` imports."""
    modules = {
        ".".join(p.relative_to(root).with_suffix("").parts): p
        for p in sorted(root.rglob("*.py"))
        if p.name != "__init__.py"
    }
    edges: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for _, module in _imported(ast.parse(path.read_text(encoding="utf-8"))):
            target = next(
                (m for m in (module, module.rpartition(".")[0]) if m in modules and m != name),
                None,
            )
            if target is not None:
                edges[name].add(target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in sorted(edges[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return sorted(circles)


def test_leakage_modules_import_in_no_circle() -> None:
    """The config types live in ``leakage._config`` and ``synthetic_text`` in
    ``leakage._synthetic``, so no leakage stage imports back into the orchestrator."""
    circles = import_circles(SRC)
    assert [c for c in circles if c[0].startswith("toolaudit.leakage.")] == []


def test_no_module_imports_in_a_circle() -> None:
    """No two modules of ``src`` import each other, directly or round a longer circle
    (the last one, ``models._hf`` ↔ ``models._hf_generate``, went when decoding took a
    protocol of what it needs instead of the backend class)."""
    assert import_circles(SRC) == []


def exported_for_tests_only(src: Path, user_docs: str) -> list[str]:
    """``package.name`` for each name in a package's ``__all__`` that nothing but tests
    needs: no other package of ``src`` names it, the user docs (``user_docs``) and the
    package's own docstring do not, and no other exported name's signature or fields
    mention it (a type a user gets back stays exported)."""
    import importlib
    import inspect

    root = src / "toolaudit"
    texts = {p: p.read_text(encoding="utf-8") for p in root.rglob("*.py")}
    found = []
    for init in sorted(root.glob("*/__init__.py")):
        pkg = importlib.import_module(f"toolaudit.{init.parent.name}")
        elsewhere = "\n".join(t for p, t in texts.items() if init.parent not in p.parents)
        exported = list(getattr(pkg, "__all__", []))
        shapes = []
        for name in exported:
            obj = getattr(pkg, name)
            kind = obj if inspect.isclass(obj) else type(obj)  # an instance: its class's methods
            members = (
                [obj, *vars(kind).values()] if kind.__module__.startswith("toolaudit") else [obj]
            )
            shapes += [str(getattr(obj, "__annotations__", ""))]
            for m in members:
                try:
                    shapes.append(str(inspect.signature(m)))
                except (TypeError, ValueError):
                    pass
        own_shapes = "\n".join(shapes)
        for name in exported:
            word = re.compile(rf"\b{re.escape(name)}\b")
            if any(word.search(t) for t in (elsewhere, user_docs, pkg.__doc__ or "")):
                continue
            if not word.search(own_shapes):
                found.append(f"{init.parent.name}.{name}")
    return found


def test_packages_export_what_another_package_or_a_user_needs() -> None:
    """Issue 28: an exported name is one another package, a user (the docs, the package's
    example) or a signature needs; names only tests use are imported from their module."""
    repo = SRC.parent
    docs = [*sorted((repo / "docs").rglob("*.md")), repo / "README.md"]
    docs += sorted((repo / "examples").rglob("*.py")) + sorted((repo / "benchmarks").rglob("*.py"))
    user_docs = "\n".join(p.read_text(encoding="utf-8") for p in docs)
    assert exported_for_tests_only(SRC, user_docs) == []
