"""`tether serve` beyond loopback: no default passwords, TLS, token lifetime (real processes).

On loopback the demo passwords stay; on any other address serve refuses them, makes strong
ones on request, and can serve HTTPS that the real clients verify.
"""

from __future__ import annotations

import datetime
import subprocess
import sys
import time
from pathlib import Path

import httpx
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.live import free_port, start


def serve(data_dir: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """A serve that is expected to refuse to start: its exit and what it printed."""
    return subprocess.run([sys.executable, "-m", "tether.cli", "serve", "--port", str(free_port()),
                           "--data-dir", str(data_dir), *extra], capture_output=True, text=True, timeout=60)


def passwords(clouds_yaml: Path) -> dict[str, str]:
    clouds = yaml.safe_load(clouds_yaml.read_text())["clouds"]
    return {name: cloud["auth"]["password"] for name, cloud in clouds.items()}


def self_signed(directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert, key_file = directory / "cert.pem", directory / "key.pem"
    cert.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert, key_file


def test_default_passwords_beyond_loopback_are_refused_in_one_line_before_anything_is_made(tmp_path) -> None:
    data_dir = tmp_path / "cloud"
    result = serve(data_dir, "--host", "0.0.0.0")
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "default password" in lines[0] and "--generate-passwords" in lines[0], lines
    assert "Traceback" not in result.stderr + result.stdout
    assert not data_dir.exists()
    # One default is enough to refuse; the message names only that user.
    result = serve(data_dir, "--host", "0.0.0.0", "--admin-password", "a-long-chosen-secret")
    assert result.returncode == 2 and "demo" in result.stderr and "admin " not in result.stderr.split("while")[1]


def test_generated_passwords_work_through_clouds_yaml_and_the_defaults_do_not(tmp_path) -> None:
    cloud = start(tmp_path / "cloud", "--host", "0.0.0.0", "--generate-passwords")
    try:
        generated = passwords(cloud.clouds_yaml)
        assert all(len(password) >= 20 and password not in ("admin", "demo") for password in generated.values())
        assert oct(cloud.clouds_yaml.stat().st_mode & 0o777) == "0o600"
        assert sorted(cloud.cli("network", "list", "-f", "value", "-c", "Name").stdout.split()) == ["private", "public"]
        assert cloud.cli("server", "list", cloud="tether-demo").returncode == 0
        guessed = cloud.cli("token", "issue", "--os-password", "admin", check=False)
        assert guessed.returncode != 0 and "401" in guessed.stderr, guessed.stderr
    finally:
        cloud.stop()
    # A restart knows no password: it keeps those in clouds.yaml, and nothing is refused.
    again = start(tmp_path / "cloud", "--host", "0.0.0.0")
    try:
        assert passwords(again.clouds_yaml) == generated
        assert again.cli("token", "issue", "-f", "value", "-c", "id").stdout.strip()
    finally:
        again.stop()


def test_a_cloud_seeded_on_loopback_is_refused_beyond_it_until_its_defaults_are_replaced(tmp_path) -> None:
    data_dir = tmp_path / "cloud"
    start(data_dir).stop()
    refused = serve(data_dir, "--host", "0.0.0.0")
    assert refused.returncode == 2 and "admin and demo still have the default password" in refused.stderr
    # A password given resets that user's, as keystone-manage bootstrap does; the other is generated.
    cloud = start(data_dir, "--host", "0.0.0.0", "--generate-passwords", "--demo-password", "demo-chose-this")
    try:
        now = passwords(cloud.clouds_yaml)
        assert now["tether"] not in ("", "admin") and now["tether-demo"] == "demo-chose-this"
        assert cloud.cli("server", "list", cloud="tether").returncode == 0
        assert cloud.cli("server", "list", cloud="tether-demo").returncode == 0
        guessed = cloud.cli("token", "issue", "--os-password", "demo", cloud="tether-demo", check=False)
        assert guessed.returncode != 0 and "401" in guessed.stderr
    finally:
        cloud.stop()


def test_tls_with_a_self_signed_certificate_is_verified_by_the_sdk_and_the_cli(tmp_path) -> None:
    cert, key = self_signed(tmp_path)
    cloud = start(tmp_path / "cloud", "--host", "0.0.0.0", "--generate-passwords", "--tls-cert", str(cert),
                  "--tls-key", str(key))
    try:
        entry = yaml.safe_load(cloud.clouds_yaml.read_text())["clouds"]["tether"]
        assert entry["auth"]["auth_url"].startswith("https://localhost:")
        assert Path(entry["cacert"]) == cert.resolve()
        sdk = cloud.connect()
        endpoints = [endpoint["url"] for service in sdk.config.get_service_catalog().catalog
                     for endpoint in service["endpoints"]]
        assert endpoints and all(url.startswith("https://localhost:") for url in endpoints)
        assert sorted(network.name for network in sdk.network.networks()) == ["private", "public"]
        assert cloud.cli("image", "list", "-f", "value", "-c", "Name").stdout.split() == ["cirros"]
        # Without the CA the same clients refuse the server: the certificate is really checked.
        clouds = yaml.safe_load(cloud.clouds_yaml.read_text())
        del clouds["clouds"]["tether"]["cacert"]
        cloud.clouds_yaml.write_text(yaml.safe_dump(clouds))
        unverified = cloud.cli("image", "list", check=False)
        assert unverified.returncode != 0 and "CERTIFICATE_VERIFY_FAILED" in unverified.stderr
    finally:
        cloud.stop()


def test_a_broken_certificate_is_a_one_line_refusal(tmp_path) -> None:
    cert, _key = self_signed(tmp_path)
    (tmp_path / "other").mkdir()
    _other_cert, other_key = self_signed(tmp_path / "other")
    result = serve(tmp_path / "cloud", "--tls-cert", str(cert), "--tls-key", str(other_key))
    assert result.returncode == 2 and "--tls-cert" in result.stderr and "Traceback" not in result.stderr
    result = serve(tmp_path / "cloud", "--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(other_key))
    assert result.returncode == 2 and "missing.pem" in result.stderr
    assert not (tmp_path / "cloud").exists()


def test_a_token_stops_working_when_its_lifetime_ends(tmp_path) -> None:
    cloud = start(tmp_path / "cloud", "--token-expiration", "8")
    try:
        auth = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
            "name": "admin", "domain": {"id": "default"}, "password": "admin"}}},
            "scope": {"project": {"name": "admin", "domain": {"id": "default"}}}}}
        issued = httpx.post(f"{cloud.base_url}/identity/v3/auth/tokens", json=auth)
        token, expires = issued.headers["X-Subject-Token"], issued.json()["token"]["expires_at"]
        lifetime = (datetime.datetime.fromisoformat(expires.replace("Z", "+00:00"))
                    - datetime.datetime.fromisoformat(issued.json()["token"]["issued_at"].replace("Z", "+00:00")))
        assert lifetime == datetime.timedelta(seconds=8)
        headers = {"X-Auth-Token": token}
        assert httpx.get(f"{cloud.base_url}/compute/v2.1/servers", headers=headers).status_code == 200
        time.sleep(9)
        for path in ("/compute/v2.1/servers", "/network/v2.0/ports", "/image/v2/images"):
            assert httpx.get(f"{cloud.base_url}{path}", headers=headers).status_code == 401, path
        checked = httpx.get(f"{cloud.base_url}/identity/v3/auth/tokens", headers={**headers, "X-Subject-Token": token})
        assert checked.status_code in (401, 404), checked.text
    finally:
        cloud.stop()


def login(base_url: str, user: str, password: str) -> httpx.Response:
    body = {"auth": {"identity": {"methods": ["password"], "password": {"user": {
        "name": user, "domain": {"id": "default"}, "password": password}}},
        "scope": {"project": {"name": user, "domain": {"id": "default"}}}}}
    return httpx.post(f"{base_url}/identity/v3/auth/tokens", json=body, timeout=30)


def test_the_seventh_wrong_password_finds_the_user_locked_until_the_lock_runs_out(tmp_path) -> None:
    cloud = start(tmp_path / "cloud", "--lockout-duration", "6")
    try:
        generic = {"error": {"code": 401, "title": "Unauthorized",
                             "message": "The request you have made requires authentication."}}
        for _ in range(6):
            wrong = login(cloud.base_url, "demo", "not-it")
            assert wrong.status_code == 401 and wrong.json() == generic
        # An unknown user is answered exactly as a wrong password is.
        unknown = login(cloud.base_url, "nobody-by-this-name", "not-it")
        assert unknown.status_code == 401 and unknown.json() == generic
        locked_at = time.monotonic()
        refused = login(cloud.base_url, "demo", "demo")
        assert refused.status_code == 401
        assert refused.json()["error"]["message"].startswith("The account is locked for user: ")
        # Another user is not affected.
        assert login(cloud.base_url, "admin", "admin").status_code == 201
        time.sleep(max(0.0, 6.5 - (time.monotonic() - locked_at)))
        assert login(cloud.base_url, "demo", "demo").status_code == 201
        # The right password reset the count: five more wrong ones do not lock.
        for _ in range(5):
            assert login(cloud.base_url, "demo", "not-it").status_code == 401
        assert login(cloud.base_url, "demo", "demo").status_code == 201
    finally:
        cloud.stop()


def test_a_token_stops_working_when_its_role_is_removed(tmp_path) -> None:
    cloud = start(tmp_path / "cloud")
    try:
        issued = login(cloud.base_url, "demo", "demo")
        headers = {"X-Auth-Token": issued.headers["X-Subject-Token"]}
        assert httpx.get(f"{cloud.base_url}/compute/v2.1/servers", headers=headers).status_code == 200
        cloud.cli("role", "remove", "--user", "demo", "--project", "demo", "member")
        for path in ("/compute/v2.1/servers", "/network/v2.0/ports", "/image/v2/images"):
            assert httpx.get(f"{cloud.base_url}{path}", headers=headers).status_code == 401, path
    finally:
        cloud.stop()
