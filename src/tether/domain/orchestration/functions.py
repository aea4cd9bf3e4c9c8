"""HOT intrinsic functions: checking their arguments, finding what they name, and evaluating them.

A function call is a mapping of exactly one key that names a function
(``{"get_param": "flavor"}``). Evaluation asks a :class:`Resolver` for
parameters, resource ids and attributes, so the same code serves validation,
creation and outputs. Semantics and messages follow heat's newest template
version (``str_replace`` serialises maps and lists as JSON, ``list_join`` joins
several lists).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Protocol

from tether.domain.orchestration.errors import Path, StackValidationFailed

FUNCTIONS = frozenset({"get_param", "get_resource", "get_attr", "str_replace", "list_join", "str_split"})


class Resolver(Protocol):
    def parameter(self, name: str) -> Any: ...
    def resource_id(self, name: str) -> Any: ...
    def attribute(self, name: str, path: tuple[Any, ...]) -> Any: ...


def function_call(value: Any) -> tuple[str, Any] | None:
    """``(name, arguments)`` when ``value`` is a function call, else None."""
    if isinstance(value, Mapping) and len(value) == 1:
        name = next(iter(value))
        if name in FUNCTIONS:
            return name, value[name]
    return None


def calls(value: Any, path: Path = ()) -> Iterator[tuple[str, Any, Path]]:
    """Every function call in ``value``, outermost first, with the path of the call's own value."""
    call = function_call(value)
    if call is not None:
        yield call[0], call[1], path
        yield from calls(call[1], (*path, call[0]))
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from calls(item, (*path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from calls(item, (*path, index))


def references(value: Any) -> frozenset[str]:
    """The resources ``value`` names through get_resource and get_attr (the implicit dependencies)."""
    return frozenset(name for name, _ in named_resources(value))


def named_resources(value: Any, path: Path = ()) -> Iterator[tuple[str, Path]]:
    for function, args, at in calls(value, path):
        if function == "get_resource" and isinstance(args, str):
            yield args, at
        elif function == "get_attr" and isinstance(args, list) and args and isinstance(args[0], str):
            yield args[0], at


def named_parameters(value: Any, path: Path = ()) -> Iterator[tuple[str, Path]]:
    for function, args, at in calls(value, path):
        if function == "get_param":
            name = args[0] if isinstance(args, list) and args else args
            if isinstance(name, str):
                yield name, at


def check_arguments(value: Any, path: Path = ()) -> None:
    """Refuse a call whose arguments have the wrong shape, before anything is resolved."""
    for function, args, at in calls(value, path):
        problem = _shape_problem(function, args)
        if problem is not None:
            raise StackValidationFailed(problem, path=(*at, function))


def _shape_problem(function: str, args: Any) -> str | None:
    if function == "get_param":
        if not args:
            return f'Function "{function}" must have arguments'
        if not isinstance(args, str | list) and function_call(args) is None:
            return f'Argument to "{function}" must be string or list'
        if isinstance(args, list) and not isinstance(args[0], str) and function_call(args[0]) is None:
            return f'Parameter name in "{function}" must be string'
    elif function == "get_resource":
        if not isinstance(args, str) and function_call(args) is None:
            return f'Argument to "{function}" must be a string'
    elif function == "get_attr":
        if not isinstance(args, list):
            return f'Argument to "{function}" must be a list'
        if len(args) < 2:
            return f'Arguments to "{function}" must be of the form [resource_name, attribute, (path), ...]'
    elif function == "str_replace":
        if not isinstance(args, Mapping):
            return f'Arguments to "{function}" must be a map'
        if "params" not in args or "template" not in args:
            return (f'"{function}" syntax should be {function}:\n  template: This is var1 template var2\n'
                    "  params:\n    var1: a\n    var2: string")
        if not isinstance(args["params"], Mapping):
            return f'"{function}" parameters must be a mapping'
    elif function == "list_join":
        example = f'"{function}" : [ " ", [ "str1", "str2"] ...]'
        if not isinstance(args, list):
            return f'Incorrect arguments to "{function}" should be: {example}'
        if len(args) < 2:
            return f'Incorrect arguments to "{function}" should be: {example}'
    elif function == "str_split":
        example = f'"{function}" : [ ",", "apples,pears", <index>]'
        if not isinstance(args, list) or len(args) not in (2, 3):
            return f'Incorrect arguments to "{function}" should be: {example}'
    return None


def resolve(value: Any, resolver: Resolver, *, path: Path = ()) -> Any:
    """``value`` with every function call evaluated; a bad call is a StackValidationFailed naming its place."""
    call = function_call(value)
    if call is not None:
        function, args = call
        problem = _shape_problem(function, args)
        if problem is not None:
            raise StackValidationFailed(problem, path=(*path, function))
        args = resolve(args, resolver, path=(*path, function))
        try:
            return _EVALUATE[function](args, resolver)
        except (TypeError, ValueError, KeyError) as error:
            message = error.args[0] if error.args else str(error)
            raise StackValidationFailed(str(message), path=(*path, function)) from None
    if isinstance(value, Mapping):
        return {key: resolve(item, resolver, path=(*path, key)) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve(item, resolver, path=(*path, index)) for index, item in enumerate(value)]
    return value


def select(value: Any, keys: Sequence[Any], function: str = "get_param") -> Any:
    """heat's walk of keys and indexes into a parameter or attribute; a missing step gives ''."""
    for key in keys:
        if not isinstance(value, Mapping | Sequence) or isinstance(value, str):
            raise TypeError(f'"{function}" can\'t traverse path')
        if not isinstance(key, str | int):
            raise TypeError(f'Path components in "{function}" must be strings')
        if isinstance(value, Sequence) and isinstance(key, str):
            try:
                key = int(key)
            except ValueError:
                raise TypeError(f"Path components in '{function}' must be a string that can be parsed "
                                "into an integer.") from None
        try:
            value = value[key]
        except (KeyError, IndexError, TypeError):
            return ""
    return value


def _get_param(args: Any, resolver: Resolver) -> Any:
    name, keys = (args, []) if isinstance(args, str) else (args[0], args[1:])
    if not isinstance(name, str):
        raise TypeError('Parameter name in "get_param" must be string')
    return select(resolver.parameter(name), keys)


def _get_resource(args: Any, resolver: Resolver) -> Any:
    return resolver.resource_id(args)


def _get_attr(args: Any, resolver: Resolver) -> Any:
    return resolver.attribute(args[0], tuple(args[1:]))


def _str_replace(args: Any, resolver: Resolver) -> str:
    template, params = args["template"], args["params"]
    if not isinstance(template, str):
        raise TypeError('"str_replace" template must be a string')
    if not isinstance(params, Mapping):
        raise TypeError('"str_replace" params must be a map')
    for key in params:
        if not isinstance(key, str):
            raise TypeError('"str_replace" param placeholders must be strings')
    values = {key: _replacement(value, key) for key, value in params.items()}
    # longest placeholder first, then alphabetical; text a replacement brought in is never replaced again
    return _replace([template], sorted(sorted(values), key=len, reverse=True), values)[0]


def _replace(strings: list[str], keys: list[str], values: Mapping[str, str]) -> list[str]:
    if not keys:
        return strings
    first, rest = keys[0], keys[1:]
    return [values[first].join(_replace(text.split(first), rest, values)) for text in strings]


def _replacement(value: Any, key: str) -> str:
    if value is None:
        return ""
    if isinstance(value, Mapping | list):
        return json.dumps(value, sort_keys=True)
    if isinstance(value, bool):
        return str(value)
    if not isinstance(value, str | int | float):
        raise TypeError('"str_replace" params must be strings, numbers, list or map.')
    return str(value)


def _list_join(args: Any, resolver: Resolver) -> str:
    delimiter, lists = args[0], args[1:]
    strings: list[Any] = []
    for items in lists:
        if items:
            if isinstance(items, str) or not isinstance(items, Sequence):
                raise TypeError('"list_join" must operate on a list')
            strings += items
    if not isinstance(delimiter, str):
        raise TypeError('"list_join" delimiter must be a string')
    return delimiter.join(_joinable(item) for item in strings)


def _joinable(item: Any) -> str:
    if item is None:
        return ""
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping | list):
        return json.dumps(item, sort_keys=True)
    raise TypeError(f"Items to join must be string, map or list not {repr(item)[:200]}")


def _str_split(args: Any, resolver: Resolver) -> Any:
    delimiter, text = args[0], args[1]
    if not isinstance(delimiter, str) or not isinstance(text, str):
        raise ValueError('Incorrect arguments to "str_split" should be: "str_split" : [ ",", "apples,pears", <index>]')
    parts = text.split(delimiter)
    if len(args) == 2:
        return parts
    try:
        return parts[int(args[2])]
    except (ValueError, IndexError):
        raise ValueError(f'Incorrect index to "str_split" should be between 0 and {len(parts) - 1}') from None


_EVALUATE = {"get_param": _get_param, "get_resource": _get_resource, "get_attr": _get_attr,
             "str_replace": _str_replace, "list_join": _list_join, "str_split": _str_split}
