"""Whether the running task is inside a database transaction.

The store sets it; the kernel refuses a checkpoint while it is set, since a
transaction held across a point where others may interleave would serialise
them and hide the races the explorer looks for.
"""

from __future__ import annotations

import contextvars

in_transaction: contextvars.ContextVar[bool] = contextvars.ContextVar("in_tx", default=False)
