"""TLS for `tether serve`: the certificate and key it is given, checked before anything starts."""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path

from tether.exits import ExitCode, Failure


@dataclass(frozen=True)
class TlsFiles:
    cert: Path
    key: Path

    def check(self) -> None:
        """Raise a one-line ``Failure`` unless the pair loads as uvicorn will load it."""
        for option, path in (("--tls-cert", self.cert), ("--tls-key", self.key)):
            if not path.is_file():
                raise Failure(ExitCode.USAGE, f"{option} {path}: no such file; give PEM files that exist")
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        try:
            context.load_cert_chain(self.cert, self.key)
        except (ssl.SSLError, OSError) as error:
            raise Failure(ExitCode.USAGE, f"--tls-cert {self.cert} and --tls-key {self.key} are not a PEM "
                                          f"certificate and its private key ({error}); give the pair that "
                                          f"belong together") from None

    def host_name(self) -> str | None:
        """The first DNS name the certificate is for (its subjectAltName, else its CN): what clients
        must call a server bound to every address."""
        from cryptography import x509
        from cryptography.x509.oid import NameOID

        certificate = x509.load_pem_x509_certificate(self.cert.read_bytes())
        try:
            names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
            dns = names.get_values_for_type(x509.DNSName)
        except x509.ExtensionNotFound:
            dns = []
        common = [str(attribute.value) for attribute in certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)]
        return next(iter(dns + common), None)

    def publicly_trusted(self) -> bool:
        """Whether a client with this machine's default trust store accepts the certificate.

        Found by a TLS handshake between two in-memory ends, the server holding the pair
        and the client ``ssl.create_default_context()`` (host name aside: the certificate
        is checked against the name the clients use by the clients themselves).
        """
        server_context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        server_context.load_cert_chain(self.cert, self.key)
        client_context = ssl.create_default_context()
        client_context.check_hostname = False
        client_in, client_out, server_in, server_out = (ssl.MemoryBIO() for _ in range(4))
        client = client_context.wrap_bio(client_in, client_out)
        server = server_context.wrap_bio(server_in, server_out, server_side=True)
        for _ in range(8):  # TLS 1.3 takes two round trips, 1.2 three
            for end, sent, to in ((client, client_out, server_in), (server, server_out, client_in)):
                try:
                    end.do_handshake()
                    if end is client:
                        return True
                except ssl.SSLWantReadError:
                    pass
                except ssl.SSLError:
                    return False
                to.write(sent.read())
        return False
