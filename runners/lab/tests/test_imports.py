"""Every wblab module imports, and the modules import one another without a cycle: the graph is
read from the sources (every import statement, those inside functions too), and the cycle finder
is shown finding the cycles it is there to refuse."""
import ast
import importlib
from pathlib import Path

import pytest

WBLAB = Path(__file__).resolve().parent.parent / "wblab"
MODULES = sorted(p.stem for p in WBLAB.glob("*.py"))


def imported(node, modules):
    """The wblab modules one import statement names ("__init__" for the package itself)."""
    if isinstance(node, ast.Import):
        names = [a.name.split(".") for a in node.names]
        return {n[1] if len(n) > 1 else "__init__" for n in names if n[0] == "wblab"}
    if not isinstance(node, ast.ImportFrom):
        return set()
    if node.level == 0 and (node.module or "").split(".")[0] != "wblab":
        return set()
    parts = (node.module or "").split(".")[1 if node.level == 0 else 0:]
    if parts and parts[0]:
        return {parts[0]}
    return {a.name if a.name in modules else "__init__" for a in node.names}


def import_graph(sources):
    """{module: the wblab modules it imports} from {module: source text}."""
    return {m: set().union(*(imported(n, sources) for n in ast.walk(ast.parse(text))))
            for m, text in sources.items()}


def find_cycle(graph):
    """One cycle of `graph` as [a, b, ..., a], or None."""
    state, path = {}, []

    def visit(m):
        state[m] = "open"
        path.append(m)
        for n in sorted(graph.get(m, ())):
            if state.get(n) == "open":
                return path[path.index(n):] + [n]
            if n not in state and (found := visit(n)):
                return found
        state[m] = "done"
        path.pop()
        return None
    for m in sorted(graph):
        if m not in state and (found := visit(m)):
            return found
    return None


def wblab_graph():
    return import_graph({m: (WBLAB / f"{m}.py").read_text() for m in MODULES})


@pytest.mark.parametrize("module", MODULES)
def test_every_module_imports(module):
    name = "wblab" if module == "__init__" else f"wblab.{module}"
    importlib.import_module(name)


def test_the_wblab_modules_import_one_another_without_a_cycle():
    graph = wblab_graph()
    assert graph["matrix"] >= {"matrix_judge", "matrix_document", "topology"}
    assert "matrix" in graph["cli"]  # the import inside main() counts too
    # Running qemu (qemurun) needs none of the topology's modules; the guest uses both.
    assert graph["guest"] >= {"qemu", "qemurun"} and graph["qemurun"] == {"__init__"}
    assert find_cycle(graph) is None


def test_the_cycle_finder_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert find_cycle({"a": {"a"}}) == ["a", "a"]
    assert find_cycle({"a": {"b"}, "b": set(), "c": {"a", "b"}}) is None


def test_the_graph_sees_the_cycle_matrix_and_cli_once_made():
    """matrix.py imported cli.py at the top, cli.py imports matrix.py inside main()."""
    sources = {"cli": "def main():\n    from .matrix import main as m\n",
               "matrix": "from .cli import topology_args\nfrom . import confusion, LabError\n",
               "confusion": "import wblab.kernel\n", "kernel": "", "__init__": ""}
    graph = import_graph(sources)
    assert graph == {"cli": {"matrix"}, "matrix": {"cli", "confusion", "__init__"},
                     "confusion": {"kernel"}, "kernel": set(), "__init__": set()}
    assert find_cycle(graph) == ["cli", "matrix", "cli"]
