"""Stack and resource states as heat names them (``ACTION_STATUS``), and the one table they move by.

A stack's state is its current action and how that action went; heat's engine and its API
report exactly these strings. Every IN_PROGRESS state is transient, with a deadline and a
``fail`` edge out of it (design rule 3): a stack whose engine died mid-action is failed by
recovery or by its deadline, never left IN_PROGRESS.
"""

from __future__ import annotations

from tether.domain.state_machine import State, StateMachine

CREATE, UPDATE, DELETE, ROLLBACK = "CREATE", "UPDATE", "DELETE", "ROLLBACK"
IN_PROGRESS, COMPLETE, FAILED = "IN_PROGRESS", "COMPLETE", "FAILED"
INIT_COMPLETE = "INIT_COMPLETE"  # a resource the engine has not touched yet

# heat's default stack timeout (``stack_action_timeout``, 60 minutes), which the API's timeout_mins overrides
DEFAULT_TIMEOUT_MINUTES = 60


def state(action: str, status: str) -> str:
    return f"{action}_{status}"


def split(name: str) -> tuple[str, str]:
    """``("CREATE", "IN_PROGRESS")`` from ``"CREATE_IN_PROGRESS"``."""
    action, _, status = name.partition("_")
    return action, status


_DOCS = {
    CREATE: "The stack's resources are being created, in dependency order.",
    UPDATE: "The stack is being moved to a new template or new parameters.",
    DELETE: "The stack's resources are being deleted, dependents first.",
    ROLLBACK: "A failed create or update is being undone.",
}
_ENDS = {
    COMPLETE: "finished as asked",
    FAILED: "stopped; stack_status_reason says why, and delete (or a new update) is the way on",
}

STATES = [State(INIT_COMPLETE, "A stack or resource before its first action.")]
for _action, _doc in _DOCS.items():
    STATES.append(State(state(_action, IN_PROGRESS), _doc, stable=False, deadline=DEFAULT_TIMEOUT_MINUTES * 60,
                        on_timeout="fail", target=state(_action, COMPLETE)))
    for _status, _end in _ENDS.items():
        STATES.append(State(state(_action, _status), f"{_doc.split(',')[0].rstrip('.')}: {_end}."))

_SETTLED = [state(action, status) for action in (CREATE, UPDATE, ROLLBACK) for status in (COMPLETE, FAILED)]

TRANSITIONS: dict[tuple[str, str], str] = {
    (INIT_COMPLETE, "create"): state(CREATE, IN_PROGRESS),
    # each action ends in its own COMPLETE or FAILED
    **{(state(action, IN_PROGRESS), "complete"): state(action, COMPLETE) for action in _DOCS},
    **{(state(action, IN_PROGRESS), "fail"): state(action, FAILED) for action in _DOCS},
    # a failed create or update is rolled back unless the stack says not to (disable_rollback)
    (state(CREATE, FAILED), "rollback"): state(ROLLBACK, IN_PROGRESS),
    (state(UPDATE, FAILED), "rollback"): state(ROLLBACK, IN_PROGRESS),
    # an update starts from any settled state (a FAILED one too: that is how a failed server is replaced)
    **{(settled, "update"): state(UPDATE, IN_PROGRESS) for settled in _SETTLED},
    # a delete is accepted in any state but gone, and supersedes an action in progress
    **{(name, "delete"): state(DELETE, IN_PROGRESS)
       for name in [INIT_COMPLETE, *_SETTLED, state(DELETE, FAILED),
                    *(state(action, IN_PROGRESS) for action in (CREATE, UPDATE, ROLLBACK))]},
}

STACK_STATES = StateMachine("stack", STATES, TRANSITIONS)


def next_state(current: str, event: str) -> str:
    """The state ``event`` leads to from ``current``; ``IllegalTransition`` when it leads nowhere."""
    return STACK_STATES.next_state(current, event)


def is_in_progress(name: str) -> bool:
    return name.endswith(IN_PROGRESS)
