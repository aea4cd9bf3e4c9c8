"""Identity (keystone) errors."""

from __future__ import annotations

from tether.domain.errors import TetherError


class IdentityError(TetherError):
    service = "identity"
    status = 500


class Unauthorized(IdentityError):
    status = 401
    template = "The request you have made requires authentication."


class Forbidden(IdentityError):
    status = 403
    template = "You are not authorized to perform the requested action: {action}."


class NotFound(IdentityError):
    status = 404
    template = "Could not find {target}: {id}."


class Conflict(IdentityError):
    status = 409
    template = "Conflict occurred attempting to store {type} - {details}."


class ValidationError(IdentityError):
    status = 400
    template = "{reason}"
