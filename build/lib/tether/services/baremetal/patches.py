"""RFC 6902 JSON patches on bare-metal resources, limited to the fields ironic lets users patch."""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

import jsonpatch
import jsonpointer

from tether.domain.errors import baremetal as be

# ironic's JsonPatchType.internal_attrs, common to every resource.
COMMON_INTERNAL = frozenset({"uuid", "id", "links", "created_at", "updated_at"})


def _root(path: Any, patch: Any) -> str:
    if not isinstance(path, str) or not path.startswith("/") or path == "/":
        raise be.PatchError(patch=patch, reason=f"Invalid path {path!r}: a path starts with '/' and names a field")
    return jsonpointer.unescape(path.split("/")[1])


def apply_patch(
    current: Mapping[str, Any],
    patch: Any,
    *,
    writable: Mapping[str, Any],
    internal: Iterable[str] = (),
    mandatory: Iterable[str] = (),
) -> dict[str, Any]:
    """The writable fields of ``current`` after ``patch``; ``current`` itself is left alone.

    ``writable`` maps each patchable field to the value it takes when the patch
    removes it. Paths into internal fields, unknown fields at the root, and
    removing a mandatory field are refused before anything is applied.
    """
    internal = COMMON_INTERNAL | frozenset(internal)
    mandatory = frozenset(mandatory)
    if not isinstance(patch, list) or not patch or not all(isinstance(op, dict) for op in patch):
        raise be.PatchError(patch=patch, reason="a patch is a non-empty list of operations")
    for op in patch:
        keys = ("path", "from") if op.get("op") in ("move", "copy") else ("path",)
        for key in keys:
            path = op.get(key)
            root = _root(path, patch)
            if root in internal:
                raise be.InvalidParameterValue(err=f"'/{root}' is an internal attribute and can not be updated")
            if root not in writable:
                if op.get("op") == "add" and path.count("/") == 1:
                    raise be.InvalidParameterValue(
                        err=f"Adding a new attribute ({path}) to the root of the resource is not allowed"
                    )
                raise be.PatchError(patch=patch, reason=f"can't patch {path}: no such attribute")
            if root in mandatory and op.get("op") in ("remove", "move") and path.count("/") == 1:
                raise be.InvalidParameterValue(err=f"'/{root}' is a mandatory attribute and can not be removed")
    document = {name: copy.deepcopy(current[name]) for name in writable}
    try:
        patched = jsonpatch.apply_patch(document, patch)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError) as error:
        raise be.PatchError(patch=patch, reason=str(error)) from None
    for name, default in writable.items():
        if name not in patched:
            patched[name] = copy.deepcopy(default)
    return patched


def changed(current: Mapping[str, Any], patched: Mapping[str, Any]) -> dict[str, Any]:
    """The fields whose value the patch changed."""
    return {name: value for name, value in patched.items() if current[name] != value}
