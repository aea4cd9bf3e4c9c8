"""The layers of the design hold in the code: the kernel and the product never import the harness."""

from __future__ import annotations

import ast
from pathlib import Path

import grimp
import pytest

import tether.services
from tether.runtime.bugs import Bug

# design.md: sim/ sits above everything; nothing below it imports it.
BELOW_SIM = ("runtime", "domain", "store", "drivers", "services", "api", "reconcile")


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("tether", include_external_packages=False)


@pytest.mark.parametrize("layer", BELOW_SIM)
def test_layer_never_imports_the_harness(graph: grimp.ImportGraph, layer: str) -> None:
    package = f"tether.{layer}"
    modules = graph.find_descendants(package) | {package}
    offending = sorted(
        f"{importer} imports {imported}"
        for importer in modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if imported == "tether.sim" or imported.startswith("tether.sim.")
    )
    assert offending == []


def test_nothing_imports_in_a_loop(graph: grimp.ImportGraph) -> None:
    loops = sorted(
        f"{importer} -> {imported} -> ... -> {importer}"
        for importer in graph.modules
        for imported in graph.find_modules_directly_imported_by(importer)
        if graph.chain_exists(importer=imported, imported=importer)
    )
    assert loops == []


def _services_sources() -> list[tuple[str, ast.Module]]:
    root = Path(tether.services.__file__).parent
    return [(str(path.relative_to(root)), ast.parse(path.read_text())) for path in sorted(root.rglob("*.py"))]


def test_services_are_operations_with_explicit_dependencies_not_mixins() -> None:
    # A class that inherits behaviour from another of ours is a god-object in pieces; errors, protocols
    # and enums may inherit from their framework's bases.
    ours = {node.name for _, module in _services_sources() for node in ast.walk(module)
            if isinstance(node, ast.ClassDef)}
    inheriting, self_typed = [], []
    for path, module in _services_sources():
        for node in ast.walk(module):
            if isinstance(node, ast.ClassDef):
                bases = [ast.unparse(base) for base in node.bases]
                inheriting += [f"{path}: {node.name}({base})" for base in bases
                               if base in ours and not base.endswith(("Error", "Exception"))]
            if isinstance(node, ast.arg) and node.arg == "self" and node.annotation is not None:
                self_typed.append(f"{path}:{node.lineno}: self: {ast.unparse(node.annotation)}")
    assert inheriting == []
    assert self_typed == []


def test_no_service_knows_of_an_emulated_bug() -> None:
    names = {bug.value for bug in Bug} | {bug.name for bug in Bug}
    mentions = [f"{path}: {node.value if isinstance(node, ast.Constant) else ast.unparse(node)}"
                for path, module in _services_sources() for node in ast.walk(module)
                if (isinstance(node, ast.Constant) and node.value in names)
                or (isinstance(node, ast.Attribute) and node.attr in names)
                or (isinstance(node, ast.Attribute) and node.attr == "bugs")]
    assert mentions == []
