"""Identity (keystone) errors, in keystone's words."""

from __future__ import annotations

from tether.domain.errors import TetherError


class IdentityError(TetherError):
    service = "identity"
    status = 500


class Unauthorized(IdentityError):
    """Any failed authentication: never says which part was wrong."""

    status = 401
    template = "The request you have made requires authentication."


class AccountLocked(Unauthorized):
    """keystone's: too many wrong passwords in a row (``Lockout``)."""

    template = "The account is locked for user: {user_id}."


class ApplicationCredentialAuthError(Unauthorized):
    template = "Error authenticating with application credential: {detail}"


class Forbidden(IdentityError):
    status = 403
    template = "You are not authorized to perform the requested action: {action}."


class NotFound(IdentityError):
    status = 404
    template = "Could not find {target}: {id}."


class DomainNotFound(NotFound):
    template = "Could not find domain: {domain_id}."


class ProjectNotFound(NotFound):
    template = "Could not find project: {project_id}."


class UserNotFound(NotFound):
    template = "Could not find user: {user_id}."


class RoleNotFound(NotFound):
    template = "Could not find role: {role_id}."


class RoleAssignmentNotFound(NotFound):
    template = (
        "Could not find role assignment with role: {role_id}, user or group: {actor_id}, "
        "project, domain, or system: {target_id}."
    )


class TokenNotFound(NotFound):
    template = "Could not find token: {token_id}."


class Conflict(IdentityError):
    status = 409
    template = "Conflict occurred attempting to store {type} - {details}."


class ValidationError(IdentityError):
    status = 400
    template = "{reason}"


class MissingAttribute(ValidationError):
    template = (
        "Expecting to find {attribute} in {target}. The server could not comply with the request "
        "since it is either malformed or otherwise incorrect. The client is assumed to be in error."
    )


class GroupNotFound(NotFound):
    template = "Could not find group: {group_id}."


class RegionNotFound(NotFound):
    template = "Could not find region: {region_id}."


class ServiceNotFound(NotFound):
    template = "Could not find service: {service_id}."


class EndpointNotFound(NotFound):
    template = "Could not find endpoint: {endpoint_id}."


class ApplicationCredentialNotFound(NotFound):
    template = "Could not find Application Credential: {application_credential_id}."


class ImpliedRoleNotFound(NotFound):
    template = "{prior_role_id} does not imply {implied_role_id}."


class UserNotInGroup(NotFound):
    template = "User {user_id} is not a member of group {group_id}."


class ForbiddenNotSecurity(IdentityError):
    """A 403 that is about the request, not about who made it (keystone's ForbiddenNotSecurity)."""

    status = 403
    template = "{reason}"


class CredentialNotFound(NotFound):
    template = "Could not find credential: {credential_id}."


class Ec2AccessKeyNotFound(Unauthorized):
    """keystone answers an unknown ec2 access key with a 401, as it would a wrong one at login."""

    template = "EC2 access key not found."


class ConsumerNotFound(NotFound):
    template = "Consumer not found"


class InvalidDomainConfig(Forbidden):
    template = "Invalid domain specific configuration: {reason}."


class DomainConfigNotFound(NotFound):
    template = "Could not find {group_or_option} in domain configuration for domain {domain_id}."


class AuthMethodNotSupported(Unauthorized):
    """An auth method this keystone does not enable (``oauth1``, ``totp``, ``mapped``, ...)."""

    template = "Attempted to authenticate with an unsupported method."


class PolicyNotFound(NotFound):
    template = "Could not find policy: {policy_id}."


class EndpointGroupNotFound(NotFound):
    template = "Could not find endpoint group: {endpoint_group_id}."


class InvalidImpliedRole(Forbidden):
    template = "{role_id} cannot be an implied roles."
