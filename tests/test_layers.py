"""The layers of the design hold in the code: the kernel and the product never import the harness."""

from __future__ import annotations

import grimp
import pytest

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
