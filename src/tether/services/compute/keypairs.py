"""Keypairs: generated or imported public keys, each user's own, as nova keeps them.

Keys and fingerprints come from ``cryptography``: a generated key is RSA 2048
(nova's choice), its private half returned once and never stored.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import hashlib
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from tether.domain.errors import compute as ce
from tether.domain.keypairs import SSH, X509, Keypair
from tether.domain.listing import ListQuery, SortKey
from tether.runtime.runtime import Runtime
from tether.services.compute import quotas
from tether.services.context import RequestContext
from tether.store import repos
from tether.store.database import Store, StoreConnection


def _colon_hex(digest: bytes) -> str:
    return ":".join(f"{byte:02x}" for byte in digest)


def ssh_fingerprint(public_key: str) -> str:
    """nova's: the MD5 of the key's blob, once ``cryptography`` agrees the key is a key."""
    try:
        serialization.load_ssh_public_key(public_key.encode())
        blob = base64.b64decode(public_key.split(" ")[1])
    except (ValueError, IndexError, binascii.Error, TypeError):
        raise ce.InvalidKeypair(reason="failed to generate fingerprint") from None
    return _colon_hex(hashlib.md5(blob, usedforsecurity=False).digest())


def x509_fingerprint(certificate: str) -> str:
    try:
        cert = x509.load_pem_x509_certificate(certificate.encode())
    except (ValueError, TypeError) as error:
        raise ce.InvalidKeypair(reason=f"failed to generate X509 fingerprint. Error message: {error}") from None
    return _colon_hex(cert.fingerprint(hashes.SHA1()))  # nova fingerprints certificates with SHA-1


def generate_ssh_key() -> tuple[str, str]:
    """A new RSA key: (private key in PEM, public key in OpenSSH form, as nova labels it)."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                serialization.NoEncryption()).decode()
    public = key.public_key().public_bytes(serialization.Encoding.OpenSSH,
                                           serialization.PublicFormat.OpenSSH).decode()
    return private, f"{public} Generated-by-Nova"


def generate_x509_certificate(user_id: str) -> tuple[str, str]:
    """nova's WinRM client certificate: (the key and certificate as base64 PKCS#12 with an empty password,
    the certificate in PEM), for CN=user_id, valid ten years."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, user_id)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .sign(key, hashes.SHA256()))
    bundle = pkcs12.serialize_key_and_certificates(None, key, cert, None, serialization.NoEncryption())
    return base64.b64encode(bundle).decode("ascii"), cert.public_bytes(serialization.Encoding.PEM).decode()


@dataclass(eq=False)
class Keypairs:
    store: Store
    rt: Runtime

    @staticmethod
    def _owner(ctx: RequestContext, user_id: str | None, action: str) -> str:
        """Keypairs are the user's own; an admin may act on another user's (nova from 2.10)."""
        owner = user_id or ctx.user_id
        if owner != ctx.user_id and not ctx.is_admin:
            raise ce.ComputeForbidden(action=f"os_compute_api:os-keypairs:{action}")
        return owner

    async def create_keypair(self, ctx: RequestContext, name: str, *, public_key: str | None = None,
                             key_type: str = SSH, user_id: str | None = None) -> tuple[Keypair, str | None]:
        """Import ``public_key``, or generate a key: (the keypair, the private key when generated)."""
        owner = self._owner(ctx, user_id, "create")
        private_key = None
        if public_key is not None:
            fingerprint = ssh_fingerprint(public_key) if key_type == SSH else x509_fingerprint(public_key)
        elif key_type == X509:
            private_key, public_key = generate_x509_certificate(owner)
            fingerprint = x509_fingerprint(public_key)
        else:
            private_key, public_key = generate_ssh_key()
            fingerprint = ssh_fingerprint(public_key)
        keypair = Keypair(user_id=owner, name=name, public_key=public_key, fingerprint=fingerprint,
                          type=key_type, created_at=self.rt.now())
        async with self.store.begin() as conn:
            await quotas.check_one_more(conn, "key_pairs", ctx.project_id or "", owner, ce.KeypairLimitExceeded)
            if await repos.keypairs.first(conn, user_id=owner, name=name) is not None:
                raise ce.KeyPairExists(key_name=name)
            keypair = await repos.keypairs.add(conn, keypair)
        return keypair, private_key

    async def keypairs(self, ctx: RequestContext, *, user_id: str | None = None,
                       limit: int | None = None, marker: str | None = None) -> list[Keypair]:
        """The user's keypairs, by name (nova's order, and what its marker names), a page of them read in
        the database: the ``limit`` after the one named ``marker``."""
        owner = self._owner(ctx, user_id, "index")
        query = ListQuery(filters={"user_id": [owner]}, sort=(SortKey("name"),), marker=marker, limit=limit)
        async with self.store.begin() as conn:
            after = None
            if marker is not None:
                after = await repos.keypairs.first(conn, user_id=owner, name=marker)
                if after is None:
                    raise ce.ComputeBadRequest(reason=f"Marker {marker} could not be found.")
            return await repos.keypairs.page(conn, query, marker=after)

    async def keypair(self, ctx: RequestContext, name: str, *, user_id: str | None = None) -> Keypair:
        owner = self._owner(ctx, user_id, "show")
        async with self.store.begin() as conn:
            return await _require(conn, owner, name)

    async def delete_keypair(self, ctx: RequestContext, name: str, *, user_id: str | None = None) -> None:
        owner = self._owner(ctx, user_id, "delete")
        async with self.store.begin() as conn:
            keypair = await _require(conn, owner, name)
            await repos.keypairs.delete(conn, keypair.id)


async def _require(conn: StoreConnection, user_id: str, name: str) -> Keypair:
    keypair = await repos.keypairs.first(conn, user_id=user_id, name=name)
    if keypair is None:
        raise ce.KeypairNotFound(name=name, user_id=user_id)
    return keypair


async def boot_key(conn: StoreConnection, user_id: str, name: str) -> Keypair:
    """The key a server boots with: the caller's own, or nova's 400 on server create."""
    keypair = await repos.keypairs.first(conn, user_id=user_id, name=name)
    if keypair is None:
        raise ce.ComputeBadRequest(reason="Invalid key_name provided.")
    return keypair
