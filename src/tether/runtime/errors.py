"""Errors raised by the kernel itself, not by any service."""

from __future__ import annotations


class ControlPlaneCrash(BaseException):
    """The control plane died at a checkpoint.

    A BaseException so that no service's ``except Exception`` can swallow it:
    in a crash no cleanup code runs.
    """

    def __init__(self, point: str) -> None:
        super().__init__(f"control plane crashed at {point}")
        self.point = point


class InjectedFault(Exception):
    """A fault rule's ``error`` action fired at a checkpoint."""

    def __init__(self, point: str) -> None:
        super().__init__(f"Injected fault at {point}")
        self.point = point


class CheckpointInTransaction(RuntimeError):
    """A checkpoint was reached inside a database transaction.

    Checkpoints are where other operations may interleave; a transaction
    held across one would serialise them and hide the races we look for.
    """
