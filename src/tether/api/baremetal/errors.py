"""The errors only ironic's API layer raises, with ironic's words and statuses.

Everything a service operation refuses keeps its own error from
``tether.domain.errors.baremetal``; these are what the HTTP layer adds:
microversion gating, malformed query strings, and the places where ironic
turns a 404 into a 400 because the missing thing was named in a body.
"""

from __future__ import annotations

from tether.domain.errors import baremetal as be


class NotAcceptable(be.BaremetalError):
    """A field, filter or verb newer than the negotiated microversion."""

    status = 406
    template = "Request not acceptable."


class InvalidUuidOrName(be.Invalid):
    template = "Expected UUID or name for {what}: {value}"


class OperationNotPermitted(be.BaremetalError):
    status = 403
    template = "Not authorized."


class ReferenceNotFound(be.Invalid):
    """A node, portgroup or chassis named in a request body does not exist (ironic: 400, not 404)."""

    template = "{message}"


class UpdateWhileTransitioning(be.Conflict):
    template = "Node {node} can not be updated while a state transition is in progress."


class Unsupported(be.Invalid):
    """A field ironic accepts but Tether has no such thing for: refused, never silently dropped."""

    template = "Tether's bare-metal service does not support {what}."


class StandalonePortsNotSupported(be.Conflict):
    template = (
        "Port group {portgroup} doesn't support standalone ports. This port cannot be created as a "
        "member of that portgroup as the port's 'pxe_enabled' field was set to True."
    )


class MethodNotAllowed(be.BaremetalError):
    """A write the negotiated microversion does not have yet (ironic's HTTPMethodNotAllowed)."""

    status = 405
    template = "The API version does not allow allocations"
