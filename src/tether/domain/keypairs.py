"""Keypairs: a user's public keys, named per user as nova names them."""

from __future__ import annotations

from dataclasses import dataclass

SSH = "ssh"
X509 = "x509"


@dataclass
class Keypair:
    user_id: str
    name: str
    public_key: str
    fingerprint: str
    type: str = SSH
    created_at: float = 0.0
    # nova's integer id, shown by GET /os-keypairs/{name}
    id: int | None = None
