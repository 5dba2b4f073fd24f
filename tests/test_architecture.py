"""The package's shape, held by tests: the layers contract, no import cycle, small modules
and functions, and a public API that the bundled plugins and the docs keep to
(docs/architecture.md)."""

from __future__ import annotations

import ast
import re
import subprocess
from pathlib import Path

import grimp
import pytest

import kbench

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "kbench"
#: the faces: modules (and the command line's package) on top that nothing in kbench imports (a
#: face may defer an import)
FACES = {"cli", "workflow.py", "sklearn.py", "testing.py"}
#: public modules besides ``kbench`` itself (docs/architecture.md, "Public API")
PUBLIC_MODULES = {"kbench", "kbench.plugin", "kbench.testing", "kbench.sklearn", "kbench.cli"}


def test_the_layers_contract_holds():
    """import-linter's contracts in pyproject.toml (it sees function-level imports too): the
    layers, and the sampler plugins kept inside kbench.samplers."""
    result = subprocess.run(["lint-imports", "--no-cache"], capture_output=True, text=True,
                            cwd=ROOT)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "2 kept, 0 broken" in result.stdout and "ignored" not in result.stdout


def test_the_generic_layers_name_no_sampler_built_in_parts():
    """A fit built in parts goes through the sampler's hook (kbench.Sampler.parts): the sweep
    and the workflow know of no DISQUEAK (tests/sweep/test_parts.py has a second sampler)."""
    generic = [*(ROOT / "kbench" / "sweep").rglob("*.py"),
               *(ROOT / "kbench" / "workflow").rglob("*.py"),
               *(ROOT / "workflows").rglob("*.smk")]
    # (a mention of DISQUEAK aside)
    assert [path.name for path in generic if "disqueak" in path.read_text()] == []


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.find_modules_directly_imported_by(v):
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
                found.append(sorted(component))

    for module in sorted(graph.modules):
        if module not in index:
            visit(module)
    return found


def test_the_import_graph_has_no_cycle():
    assert _cycles(grimp.build_graph("kbench")) == []


def test_the_cycle_finder_finds_a_cycle():
    """The test above can fail: a graph with a cycle is reported."""

    class Graph:
        modules = {"a", "b", "c"}

        @staticmethod
        def find_modules_directly_imported_by(module):
            return {"a": {"b"}, "b": {"a", "c"}, "c": set()}[module]

    assert _cycles(Graph()) == [["a", "b"]]


def _kbench_imports_in_functions(path: Path) -> list[str]:
    """Function-level imports of kbench, but for a package's module ``__getattr__`` (PEP 562):
    a name loaded when first used, so that what a sweep's worker imports stays light."""
    found = []
    tree = ast.parse(path.read_text())
    lazy = {id(node) for node in tree.body if path.name == "__init__.py"
            and isinstance(node, ast.FunctionDef)
            and node.name == "__getattr__"}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and id(node) not in lazy:
            for inner in ast.walk(node):
                if (isinstance(inner, ast.ImportFrom)
                        and (inner.module or "").startswith("kbench")
                        or isinstance(inner, ast.Import)
                        and any(a.name.startswith("kbench") for a in inner.names)):
                    found.append(f"{path.relative_to(ROOT)}:{inner.lineno}")
    return found


def test_no_function_level_import_of_kbench_outside_the_faces():
    modules = [p for p in PACKAGE.rglob("*.py") if p.relative_to(PACKAGE).parts[0] not in FACES]
    assert [hit for p in modules for hit in _kbench_imports_in_functions(p)] == []


def test_modules_and_functions_are_small():
    entries = [p.name for p in PACKAGE.iterdir() if p.name != "__pycache__"]
    assert len(entries) <= 25, sorted(entries)  # 25: kbench.plugin, the plugin authors' API
    long_modules, long_functions = [], []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text()
        if text.count("\n") > 400:
            long_modules.append(str(path.relative_to(ROOT)))
        for node in ast.walk(ast.parse(text)):
            if (isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                    and node.end_lineno - node.lineno >= 60):
                long_functions.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
    assert long_modules == [] and long_functions == []


def test_the_public_api_is_a_sorted_list_of_existing_names():
    for module in (kbench, kbench.plugin):
        assert module.__all__ == sorted(module.__all__)
        assert len(set(module.__all__)) == len(module.__all__)
        for name in module.__all__:
            assert hasattr(module, name), name
    assert all(getattr(kbench, name) is getattr(kbench.plugin, name)
               for name in kbench.plugin.__all__)


_FROM = re.compile(r"^[ \t]*from\s+(kbench[\w.]*)\s+import\s+(\([^)]*\)|[\w \t,]+)", re.M)
_IMPORT = re.compile(r"^[ \t]*import\s+(kbench[\w.]*)", re.M)
_ATTRIBUTE = re.compile(r"(?<![\w.])kbench\.(\w+)")
_PLUGIN_ATTRIBUTE = re.compile(r"(?<![\w.])kbench\.plugin\.(\w+)")


def private_uses(text: str) -> list[str]:
    """The kbench names ``text`` (Python source or a markdown page) uses beyond the public API."""
    found = []
    for module, names in _FROM.findall(text):
        listed = {"kbench": kbench.__all__, "kbench.plugin": kbench.plugin.__all__}.get(module)
        if listed is not None:
            found += [f"{module}.{n}" for n in re.split(r"[\s,()]+", names) if n
                      and n not in listed]
        elif module not in PUBLIC_MODULES:
            found.append(module)
    found += [m for m in _IMPORT.findall(text) if m not in PUBLIC_MODULES]
    public_submodules = {m.split(".", 1)[1] for m in PUBLIC_MODULES if "." in m}
    code = _IMPORT.sub("", _FROM.sub("", text))
    found += [f"kbench.{n}" for n in _ATTRIBUTE.findall(code)
              if n not in kbench.__all__ and n not in public_submodules and not n.startswith("__")]
    found += [f"kbench.plugin.{n}" for n in _PLUGIN_ATTRIBUTE.findall(code)
              if n not in kbench.plugin.__all__ and not n.startswith("__")]
    return found


def test_the_public_api_checker_catches_private_uses():
    assert private_uses("from kbench.lowrank.maps import LowRank\nkbench.get_registry()\n") == [
        "kbench.lowrank.maps", "kbench.get_registry"]
    assert private_uses("import kbench\nkbench.Sampler\nkbench.plugin.run\nfrom kbench.plugin "
                        "import Sampler, run\n") \
        == ["kbench.plugin.run", "kbench.Sampler", "kbench.plugin.run"]  # each name in its own list
    assert private_uses("import kbench\nfrom kbench.plugin import Sampler, "
                        "hookimpl\nkbench.make_sampler('uniform')\nfrom kbench.testing import "
                        "check_sampler\n") == []


PLUGIN_AND_DOC_FILES = sorted([*ROOT.glob("plugins/*/**/*.py"), *ROOT.glob("docs/*.md"),
                               ROOT / "README.md"])


@pytest.mark.parametrize("path", PLUGIN_AND_DOC_FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_plugins_and_docs_use_only_the_public_api(path):
    assert private_uses(path.read_text()) == []


def _imported_modules(folder: Path) -> set[str]:
    """The top-level modules the Python files under ``folder`` import (at any level)."""
    found = set()
    for path in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                found |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.split(".")[0])
    return found


def _declared(pyproject: Path) -> set[str]:
    """The distributions a pyproject.toml declares as its dependencies, normalised."""
    import tomllib

    requirements = tomllib.loads(pyproject.read_text())["project"]["dependencies"]
    return {re.split(r"[<>=!~\[; ]", req, maxsplit=1)[0].lower().replace("_", "-")
            for req in requirements}


@pytest.mark.parametrize("package", [ROOT, *sorted((ROOT / "plugins").glob("kbench-*"))],
                         ids=lambda path: "kbench" if path == ROOT else path.name)
def test_every_imported_package_is_a_declared_dependency(package):
    """A module that kbench (or a bundled plugin) imports comes from the standard library, from
    itself, or from a distribution its pyproject.toml declares: an undeclared one (installed on
    the developer's machine by hand, or by another package) fails a fresh install."""
    import importlib.metadata
    import sys

    code = package / "kbench" if package == ROOT else next(package.glob("kbench_*"))
    providers = importlib.metadata.packages_distributions()
    own = {"kbench", code.name}
    declared = _declared(package / "pyproject.toml")
    missing = {module: providers.get(module)
               for module in _imported_modules(code) - sys.stdlib_module_names - own
               if not {d.lower().replace("_", "-") for d in providers.get(module, [])} & declared}
    assert not missing, f"{package.name}/pyproject.toml does not declare what provides {missing}"


def test_the_exact_layer_calls_no_task():
    """Requests go down: the sweep asks each task what it needs of a matrix-free exact
    baseline (Task.prepare_exact) and saves it; kbench.exact computes and never calls a task."""
    text = "".join(path.read_text() for path in (PACKAGE / "exact").rglob("*.py"))
    assert "prepare_exact" not in text and "kbench.tasks" not in text
