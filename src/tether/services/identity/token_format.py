"""A token as keystone renders it (``keystone/common/render_token.py``).

Pure formatting: everything comes from the token, which captured names and
role ids when it was issued.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from tether.domain.identity import Token


def isotime(moment: float) -> str:
    """``2026-01-01T00:00:00.000000Z``, keystone's timestamp shape."""
    return datetime.fromtimestamp(moment, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def token_body(token: Token, catalog: list[dict[str, Any]] | None) -> dict[str, Any]:
    """The ``{"token": {...}}`` body of POST/GET /v3/auth/tokens.

    As keystone does: ``roles`` only on scoped tokens, ``is_domain`` only on
    project-scoped ones, and no ``catalog`` on an unscoped token or when
    ``catalog`` is None (``?nocatalog``).
    """
    body: dict[str, Any] = {
        "methods": list(token.methods),
        "user": {
            "domain": {"id": token.user_domain_id, "name": token.user_domain_name},
            "id": token.user_id,
            "name": token.user_name,
            "password_expires_at": None,
        },
        "audit_ids": [token.audit_id, *([token.parent_audit_id] if token.parent_audit_id else [])],
        "expires_at": isotime(token.expires_at),
        "issued_at": isotime(token.issued_at),
    }
    roles = [{"id": token.role_ids.get(name, name), "name": name} for name in token.roles]
    if token.system:
        body["roles"] = roles
        body["system"] = {"all": True}
    elif token.domain_id is not None:
        body["domain"] = {"id": token.domain_id, "name": token.domain_name}
        body["roles"] = roles
    elif token.project_id is not None:
        body["project"] = {
            "domain": {"id": token.project_domain_id, "name": token.project_domain_name},
            "id": token.project_id,
            "name": token.project_name,
        }
        body["is_domain"] = False
        body["roles"] = roles
    if catalog is not None and not token.is_unscoped:
        body["catalog"] = catalog
    return {"token": body}
