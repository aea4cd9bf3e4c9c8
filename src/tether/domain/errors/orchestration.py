"""Orchestration (heat) errors, in heat's words; a template's own errors are in
``tether.domain.orchestration.errors``."""

from __future__ import annotations

from tether.domain.errors import TetherError


class OrchestrationApiError(TetherError):
    service = "orchestration"
    status = 500


class EntityNotFound(OrchestrationApiError):
    status = 404
    template = "The {entity} ({name}) could not be found."


class StackExists(OrchestrationApiError):
    status = 409
    template = "The Stack ({stack_name}) already exists."


class ActionInProgress(OrchestrationApiError):
    status = 409
    template = "Stack {stack_name} already has an action ({action}) in progress."


class InvalidStackName(OrchestrationApiError):
    status = 400
    template = ('Invalid stack name {name} must contain only alphanumeric or "_-." characters, must start with '
                "alpha and must be 255 characters or less.")


class OrchestrationBadRequest(OrchestrationApiError):
    status = 400
    template = "{reason}"


class OrchestrationForbidden(OrchestrationApiError):
    status = 403
    template = "You are not authorized to use {action}."


class NotSupported(OrchestrationApiError):
    status = 400
    template = "{feature} is not supported."
