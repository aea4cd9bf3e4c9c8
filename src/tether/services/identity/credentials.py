"""Credentials (keystone's /v3/credentials) and the ec2 key pairs of OS-EC2, which are credentials too.

An ec2 credential's id is the sha256 of its access key (keystone's ``hash_access_key``), so the
OS-EC2 API finds one by the key alone, and two credentials cannot share a key.
"""

from __future__ import annotations

import hashlib
import json
import random
import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError

from tether.domain.errors import identity as errors
from tether.domain.identity import Credential, new_keystone_id
from tether.store import repos
from tether.store.database import Store

EC2 = "ec2"


def hash_access_key(access: str) -> str:
    return hashlib.sha256(access.encode("utf8")).hexdigest()


def ec2_blob(blob: str) -> dict[str, Any]:
    """An ec2 credential's blob: a JSON object with an ``access`` key, or keystone's 400."""
    try:
        parsed = json.loads(blob)
    except ValueError:
        raise errors.ValidationError(reason="Invalid blob in credential") from None
    if not parsed or not isinstance(parsed, dict):
        raise errors.MissingAttribute(attribute="blob", target="credential")
    if parsed.get("access") is None:
        raise errors.MissingAttribute(attribute="access", target="credential")
    return parsed


def _conflict(credential_id: str) -> errors.Conflict:
    return errors.Conflict(type="credential", details=f"Duplicate entry found with ID {credential_id}")


@dataclass(eq=False)
class Credentials:
    store: Store
    rng: random.Random

    async def create(self, *, user_id: str, type: str, blob: str, project_id: str | None = None,
                     extra: dict[str, Any] | None = None) -> Credential:
        if type.lower() == EC2:
            if not project_id:
                raise errors.MissingAttribute(attribute="project_id", target="credential")
            credential_id = hash_access_key(str(ec2_blob(blob)["access"]))
        else:
            credential_id = new_keystone_id(self.rng)
        credential = Credential(id=credential_id, user_id=user_id, type=type, blob=blob, project_id=project_id,
                                extra=extra or {})
        try:
            async with self.store.begin() as conn:
                if await repos.credentials.get(conn, credential_id) is not None:
                    raise _conflict(credential_id)
                await repos.credentials.add(conn, credential)
        except IntegrityError:
            raise _conflict(credential_id) from None
        return credential

    async def get(self, credential_id: str) -> Credential:
        async with self.store.begin() as conn:
            credential = await repos.credentials.get(conn, credential_id)
        if credential is None:
            raise errors.CredentialNotFound(credential_id=credential_id)
        return credential

    async def list(self, *, user_id: str | None = None, type: str | None = None) -> list[Credential]:
        filters = {key: value for key, value in (("user_id", user_id), ("type", type)) if value is not None}
        async with self.store.begin() as conn:
            return await repos.credentials.find(conn, order_by=("id",), **filters)

    async def update(self, credential_id: str, changes: dict[str, Any]) -> Credential:
        """Keystone's PATCH: ``blob``, ``type``, ``project_id``, ``user_id`` and extra attributes; an ec2
        credential keeps its access key (and so its id) and must keep a project."""
        current = await self.get(credential_id)
        new_type = changes.get("type", current.type)
        new_blob = changes.get("blob", current.blob)
        new_project = changes.get("project_id", current.project_id)
        if new_type.lower() == EC2:
            if not new_project:
                raise errors.MissingAttribute(attribute="project_id", target="credential")
            blob = ec2_blob(new_blob)
            if current.type.lower() == EC2:
                old = json.loads(current.blob) if current.blob else {}
                for key in ("trust_id", "app_cred_id", "access_token_id", "access_id"):
                    if old.get(key) != blob.get(key):
                        raise errors.ValidationError(reason=f"{key} can not be updated for credential")
        columns = {key: value for key, value in (("type", new_type), ("blob", new_blob),
                                                 ("project_id", new_project),
                                                 ("user_id", changes.get("user_id", current.user_id)))}
        extra = {**current.extra, **{k: v for k, v in changes.items()
                                     if k not in ("id", "type", "blob", "project_id", "user_id", "links")}}
        async with self.store.begin() as conn:
            await repos.credentials.update(conn, credential_id, extra=extra, **columns)
        return await self.get(credential_id)

    async def delete(self, credential_id: str) -> None:
        async with self.store.begin() as conn:
            if not await repos.credentials.delete(conn, credential_id):
                raise errors.CredentialNotFound(credential_id=credential_id)

    # -- OS-EC2 -------------------------------------------------------------------------------------

    async def create_ec2(self, user_id: str, project_id: str) -> Credential:
        """A new ec2 key pair for ``user_id`` on ``project_id`` (both must exist)."""
        async with self.store.begin() as conn:
            if await repos.users.get(conn, user_id) is None:
                raise errors.UserNotFound(user_id=user_id)
            if await repos.projects.get(conn, project_id) is None:
                raise errors.ProjectNotFound(project_id=project_id)
        access = uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        secret = uuid.UUID(int=self.rng.getrandbits(128), version=4).hex
        blob = json.dumps({"access": access, "secret": secret, "trust_id": None})
        return await self.create(user_id=user_id, type=EC2, blob=blob, project_id=project_id)

    async def get_ec2(self, user_id: str, access: str) -> Credential:
        async with self.store.begin() as conn:
            if await repos.users.get(conn, user_id) is None:
                raise errors.UserNotFound(user_id=user_id)
            credential = await repos.credentials.get(conn, hash_access_key(access))
        if credential is None:
            raise errors.CredentialNotFound(credential_id=hash_access_key(access))
        if credential.type != EC2:
            raise errors.Ec2AccessKeyNotFound()
        return credential

    async def list_ec2(self, user_id: str) -> list[Credential]:
        async with self.store.begin() as conn:
            if await repos.users.get(conn, user_id) is None:
                raise errors.UserNotFound(user_id=user_id)
        return await self.list(user_id=user_id, type=EC2)

    async def delete_ec2(self, user_id: str, access: str) -> None:
        credential = await self.get_ec2(user_id, access)
        await self.delete(credential.id)
