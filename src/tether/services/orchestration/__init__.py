"""Orchestration: heat's stacks, on the other services' public operations."""

from tether.services.orchestration.service import OrchestrationService, OrchestrationSteps

__all__ = ["OrchestrationService", "OrchestrationSteps"]
