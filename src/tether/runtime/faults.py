"""Fault rules: ``POINT=ACTION[*N]``.

ACTION is ``sleep:SECONDS``, ``error`` or ``crash`` at a checkpoint, or ``off``
at a protection (``checkpoints.PROTECTIONS``: one of two layers that guard one
invariant, switched off to show the other holds alone); ``*N`` makes a rule
fire only the first N times its point is reached.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from tether.runtime.checkpoints import PROTECTIONS, checkpoint_names, is_checkpoint, is_protection

_RULE = re.compile(
    r"^(?P<point>[a-z_.]+)=(?P<action>sleep:(?P<seconds>\d+(?:\.\d+)?)|error|crash|off)"
    r"(?:\*(?P<times>\d+))?$"
)


class FaultRuleError(ValueError):
    """A fault rule that cannot be parsed or names no checkpoint."""


@dataclass
class FaultRule:
    point: str
    action: str  # "sleep" | "error" | "crash" at a checkpoint; "off" at a protection
    seconds: float = 0.0
    times: int | None = None
    fired: int = field(default=0, compare=False)

    @classmethod
    def parse(cls, text: str) -> FaultRule:
        match = _RULE.match(text.strip())
        if not match:
            raise FaultRuleError(
                f"Invalid fault rule {text!r}: expected POINT=sleep:SECONDS|error|crash[*N] or PROTECTION=off[*N]"
            )
        point = match["point"]
        if match["action"] == "off":
            if not is_protection(point):
                raise FaultRuleError(f"Unknown protection {point!r} in fault rule; the ones that can be switched "
                                     f"off are {', '.join(sorted(PROTECTIONS))}")
        elif not is_checkpoint(point):
            raise FaultRuleError(
                f"Unknown checkpoint {point!r} in fault rule; "
                f"`tether faults list` prints the {len(checkpoint_names())} names"
            )
        action = match["action"].split(":")[0]
        seconds = float(match["seconds"]) if match["seconds"] else 0.0
        times = int(match["times"]) if match["times"] else None
        return cls(point=point, action=action, seconds=seconds, times=times)

    def __str__(self) -> str:
        action = f"sleep:{self.seconds:g}" if self.action == "sleep" else self.action
        return f"{self.point}={action}" + (f"*{self.times}" if self.times is not None else "")


class FaultPlan:
    """The active rules; the first matching rule that still has firings left wins."""

    def __init__(self, rules: list[FaultRule] | None = None) -> None:
        self.rules = list(rules or [])

    @classmethod
    def parse(cls, texts: list[str] | tuple[str, ...]) -> FaultPlan:
        return cls([FaultRule.parse(text) for text in texts])

    def fire(self, point: str) -> FaultRule | None:
        for rule in self.rules:
            if rule.point != point:
                continue
            if rule.times is not None and rule.fired >= rule.times:
                continue
            rule.fired += 1
            return rule
        return None
