"""The error types neutron itself answers with, where they differ from the service's.

The service raises typed errors in neutron's words; on the wire neutron names
some of them after the webob exception that carried them (``HTTPBadRequest``)
or after its own class (``PortBound``). ``neutron_errors`` renames them in
one place, so clients that match on ``NeutronError.type`` see neutron's names.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tether.domain.errors import network as ne


class HTTPBadRequest(ne.NetworkError):
    status = 400
    template = "{reason}"


class HTTPNotFound(ne.NetworkError):
    status = 404
    template = "{reason}"


class MalformedRequestBody(ne.NetworkError):
    status = 400
    template = "Malformed request body: {reason}"


class PolicyNotAuthorized(ne.NetworkError):
    status = 403
    template = "{rule} is disallowed by policy"


class PortBound(ne.Conflict):
    pass


# Service errors that neutron sends under another type name.
_RENAMED: dict[type[ne.NetworkError], type[ne.NetworkError]] = {
    ne.InvalidAttribute: HTTPBadRequest,
    ne.UnrecognizedAttribute: HTTPBadRequest,
    ne.ReadOnlyAttribute: HTTPBadRequest,
    ne.InvalidFilter: HTTPBadRequest,
    ne.AttributeRefused: HTTPBadRequest,
    ne.MacChangeOnBoundPort: PortBound,
}


@contextmanager
def neutron_errors() -> Iterator[None]:
    try:
        yield
    except ne.NetworkError as error:
        renamed = _RENAMED.get(type(error))
        if renamed is None:
            raise
        raise renamed(error.message) from None


def policy_rule(action: str, attributes: list[str]) -> str:
    """oslo.policy's text for a refused create/update: ``(rule:create_port and rule:create_port:binding:host_id)``."""
    rule = f"rule:{action}"
    for attribute in attributes:
        rule = f"({rule} and rule:{action}:{attribute})"
    return rule
