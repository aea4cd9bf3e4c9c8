"""An image's status, as a table: which verb moves it from which status to which.

After glance's ``glance/domain/__init__.py`` (the ``status`` setter's valid
transitions) and its data, import and action controllers. Every write of an
image's status goes through ``next_status``.
"""

from __future__ import annotations

from tether.domain.errors import image as errors

QUEUED = "queued"
"""A record without data: it waits for an upload or a stage."""
SAVING = "saving"
"""Data is being uploaded (``PUT .../file``)."""
UPLOADING = "uploading"
"""Data is staged (``PUT .../stage``) or being staged; it waits for ``glance-direct`` import."""
IMPORTING = "importing"
"""Staged data is being moved into the store."""
ACTIVE = "active"
"""Data is stored; the image can be booted and downloaded."""
DEACTIVATED = "deactivated"
"""Data is kept but only admins may download it."""

# verb -> {status before: status after}
TRANSITIONS: dict[str, dict[str, str]] = {
    "upload": {QUEUED: SAVING},
    "uploaded": {SAVING: ACTIVE},
    "stage": {QUEUED: UPLOADING},
    "import": {UPLOADING: IMPORTING},
    "imported": {IMPORTING: ACTIVE},
    # glance's ``_restore``: a failed or interrupted transfer leaves the image as it was before
    "restore": {SAVING: QUEUED, UPLOADING: QUEUED, IMPORTING: QUEUED},
    "deactivate": {ACTIVE: DEACTIVATED, DEACTIVATED: DEACTIVATED},
    "reactivate": {DEACTIVATED: ACTIVE, ACTIVE: ACTIVE},
}

# Where a verb would go, to name it in a refusal.
_TARGETS = {"upload": SAVING, "uploaded": ACTIVE, "stage": UPLOADING, "import": IMPORTING, "imported": ACTIVE,
            "restore": QUEUED}

# Statuses that last only while a request of this process is moving data; a restart finds them abandoned.
IN_FLIGHT = (SAVING, IMPORTING)


def next_status(status: str, verb: str) -> str:
    """The status ``verb`` moves an image in ``status`` to, or glance's refusal."""
    after = TRANSITIONS[verb].get(status)
    if after is not None:
        return after
    if verb in ("deactivate", "reactivate"):
        raise errors.ImageForbidden(reason=f"Not allowed to {verb} image in status '{status}'")
    raise errors.InvalidImageStatusTransition(before=status, after=_TARGETS[verb])
