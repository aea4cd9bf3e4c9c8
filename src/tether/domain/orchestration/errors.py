"""Orchestration (heat) errors, in heat's words.

A template error names its place the way heat does
(``Property error: resources.server.properties.flavor: ...``), and the line
when the template came as text, so an operator finds both the fix and the
upstream reports about it.
"""

from __future__ import annotations

from tether.domain.errors import TetherError

Path = tuple[str | int, ...]


def format_path(path: Path) -> str:
    """Heat's rendering of a place: ``resources.server.properties.networks[0].network``."""
    text = ""
    for item in path:
        if isinstance(item, int) or item.isdigit():
            text += f"[{item}]"
        elif text:
            text += f".{item}"
        else:
            text = item
    return text


class OrchestrationError(TetherError):
    service = "orchestration"
    status = 500


class StackValidationFailed(OrchestrationError):
    """A template, environment or parameter that heat would refuse before creating anything."""

    status = 400

    def __init__(self, message: str, *, path: Path = (), line: int | None = None, error: str | None = None) -> None:
        self.path = tuple(path)
        self.line = line
        # heat prefixes property problems with "Property error"; the engine can pass only a message and a path
        self.error = error if error is not None else _default_error(self.path)
        self.error_message = message
        place = format_path(self.path)
        text = "".join((f"{self.error}: " if self.error else "", f"{place}: " if place else "", message))
        if line is not None:
            text += f" (line {line})"
        super().__init__(text)

    @property
    def kind(self) -> str:
        # the orchestration envelope's error.type is heat's class name for every template error
        return "StackValidationFailed"


def _default_error(path: Path) -> str:
    if len(path) >= 3 and path[0] == "resources" and path[2] == "properties":
        return "Property error"
    return ""


class InvalidTemplateVersion(StackValidationFailed):
    def __init__(self, explanation: str, *, path: Path = (), line: int | None = None) -> None:
        super().__init__(f"The template version is invalid: {explanation}", path=path, line=line, error="")


class InvalidTemplateReference(StackValidationFailed):
    def __init__(self, resource: str, key: str, *, path: Path = (), line: int | None = None) -> None:
        self.resource = resource
        super().__init__(f'The specified reference "{resource}" (in {key}) is incorrect.', path=path, line=line,
                         error="")


class CircularDependency(StackValidationFailed):
    def __init__(self, cycle: list[str], *, line: int | None = None) -> None:
        self.cycle = tuple(cycle)
        super().__init__(f"Circular Dependency Found: {' -> '.join(cycle)}", path=("resources",), line=line, error="")


class UnknownResourceType(StackValidationFailed):
    def __init__(self, type_name: str, *, path: Path = (), line: int | None = None) -> None:
        self.type_name = type_name
        super().__init__(f"The Resource Type ({type_name}) could not be found.", path=path, line=line, error="")
