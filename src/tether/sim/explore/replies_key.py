"""The part of a reply history that a verdict can still depend on, as a key that ignores its order.

What the end state will be judged against is the set of calls and the
successes promised (not the states they were given in); what was judged
when each reply came is its finding.
Two schedules that reach one state by different orders of the same calls
and replies, with the same findings so far, are judged alike from there on,
so the explorer's state cache may take them for one.
"""

from __future__ import annotations

from tether.domain.replies import Call, Event, Reply, check_replies


def _named(call: Call) -> tuple[str, str, str, str, str, bool]:
    return (call.actor, call.op, call.server, call.port, call.node, call.for_boot)


def replies_key(history: list[Event]) -> tuple[object, ...]:
    calls = sorted(_named(event) for event in history if isinstance(event, Call))
    # the state a reply was given in matters only to the finding judged then, which ``found`` holds
    replies = sorted((_named(event.call), event.ok, event.answer) for event in history if isinstance(event, Reply))
    found = sorted(violation.evidence for violation in check_replies(history))
    return tuple(calls), tuple(replies), tuple(found)
