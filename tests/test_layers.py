"""The house by layers, measured from the imports (issue 20): every import of
every module (function-level ones too) points to its own layer or one below,
no modules import each other in a circle, no function is long without a
reason, the top of the package is short, and no two module names differ only
by a suffix or a plural.

The order of the layers is the one ``worksheet/__init__.py`` states.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import worksheet

PACKAGE = Path(worksheet.__file__).parent

# bottom to top; the layers of one entry are one floor (they may import each other)
LAYERS = [
    ("policy",),
    ("exact",),
    ("solution",),
    ("parse",),
    ("steps",),
    ("kinds",),
    ("check", "render"),
    ("build",),
    ("top", "practice"),
]
FLOOR = {name: i for i, names in enumerate(LAYERS) for name in names}
MAX_FUNCTION_LINES = 60  # longer: a reason on the def line (`long:`), see pyproject's C901/PLR0915
MAX_TOP_MODULES = 4  # besides __init__.py


def modules() -> dict[str, Path]:
    """Dotted name -> file, for every module of the package."""
    out = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = ["worksheet", *path.relative_to(PACKAGE).with_suffix("").parts]
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = modules()


def layer(module: str) -> str:
    """The layer of a module: its package under worksheet, or "top"."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and (PACKAGE / parts[1]).is_dir() else "top"


def imports(module: str) -> set[str]:
    """The modules of worksheet that ``module`` imports, anywhere in its code."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            # ``from pkg import mod`` imports the module pkg.mod
            targets = [f"{source}.{a.name}" if f"{source}.{a.name}" in MODULES else source for a in node.names]
        else:
            continue
        for target in targets:
            while target and target not in MODULES:  # ``import worksheet.x.y`` of a name: its module
                target = target.rpartition(".")[0]
            if target.startswith("worksheet") and target != module:
                found.add(target)
    return found


GRAPH = {m: imports(m) for m in MODULES}


def test_every_module_is_in_a_layer_of_the_stated_order():
    assert {layer(m) for m in MODULES} == set(FLOOR)
    doc = worksheet.__doc__
    stated = [name for names in LAYERS[:-1] for name in names]
    assert [m.group(1) for m in re.finditer(r"``(\w+)/``", doc) if m.group(1) in FLOOR] == stated


def test_every_import_points_to_its_own_layer_or_one_below():
    upward = sorted(f"{m} -> {t}" for m, ts in GRAPH.items() for t in ts if FLOOR[layer(t)] > FLOOR[layer(m)])
    assert upward == []


def test_no_modules_import_each_other_in_a_circle():
    circles, done, path = [], set(), []

    def visit(m):
        if m in path:
            circles.append(path[path.index(m) :] + [m])
            return
        if m in done:
            return
        path.append(m)
        for t in sorted(GRAPH[m]):
            visit(t)
        path.pop()
        done.add(m)

    for m in sorted(GRAPH):
        visit(m)
    assert circles == []


def test_no_function_is_longer_than_60_lines_without_a_reason_beside_it():
    """A function a reader can hold is about a screen: over 60 lines,
    the comment right above its ``def`` says why (``# long: ...``), as ruff's C901
    and PLR0915 limits (pyproject.toml) are waived only with a reason."""
    found = []
    for m, path in MODULES.items():
        lines = path.read_text(encoding="utf-8").splitlines()
        for node in ast.walk(ast.parse("\n".join(lines))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = node.end_lineno - node.lineno + 1
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                above = first
                while above > 0 and lines[above - 1].strip().startswith("#"):
                    above -= 1
                head = lines[above : node.body[0].lineno - 1]  # the comments above, the def line(s)
                if length > MAX_FUNCTION_LINES and not any("long:" in line for line in head):
                    found.append(f"{m}.{node.name} ({length} lines)")
    assert found == []


def test_the_top_of_the_package_holds_at_most_four_modules():
    top = sorted(p.name for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(top) <= MAX_TOP_MODULES, top


def test_no_two_module_names_differ_only_by_a_suffix_or_a_plural():
    """(``reference`` beside ``references``, ``blocks`` beside ``layer_blocks``);
    kind modules are named after their kinds, so two kinds may share a word."""
    from worksheet.kinds import KINDS

    kind_modules = {module for module, _ in KINDS.values()}
    names = {m.rpartition(".")[2] for m, p in MODULES.items() if p.name != "__init__.py"}

    def alike(a: str, b: str) -> bool:
        if a in kind_modules and b in kind_modules:
            return False
        return a + "s" == b or a.startswith(b + "_") or a.endswith("_" + b) or a.replace("_", "") == b.replace("_", "")

    assert sorted((a, b) for a in names for b in names if a != b and alike(a, b)) == []


def test_each_package_says_what_its_layer_is_for_and_what_it_may_import():
    for path in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
        assert len(doc.splitlines()) >= 3, path
        assert re.search(r"may import|imports? nothing", doc, re.IGNORECASE), path


def test_no_module_outside_kinds_names_a_kind():
    """What the rest needs to know of a kind, the kind declares (``Params.carries``,
    ``Params.conventions_if``, ``kinds.DEFAULT``): no string of code outside
    ``kinds/`` is a kind's name.  Docstrings may show examples; the benchmarks
    (``worksheet.bench``, ``worksheet.practice.bench``) choose their workloads by name."""
    from worksheet.kinds import KINDS

    named = []
    for module, path in MODULES.items():
        if layer(module) == "kinds" or module in ("worksheet.bench", "worksheet.practice.bench"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(n.body[0].value)
            for n in ast.walk(tree)
            if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef))
            and n.body
            and isinstance(n.body[0], ast.Expr)
            and isinstance(n.body[0].value, ast.Constant)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
                if node.value.partition(":")[0] in KINDS:
                    named.append(f"{module}: {node.value!r}")
    assert named == []
