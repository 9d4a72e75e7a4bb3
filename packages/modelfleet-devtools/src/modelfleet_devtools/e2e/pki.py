"""Certificates for the control plane, made with the openssl command line."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class KeyPair:
    cert: Path
    key: Path


def _openssl(*args: str | Path) -> None:
    subprocess.run(["openssl", *map(str, args)], check=True, capture_output=True)


def make_ca(folder: Path, name: str) -> KeyPair:
    folder.mkdir(parents=True, exist_ok=True)
    pair = KeyPair(folder / f"{name}.crt", folder / f"{name}.key")
    _openssl("genrsa", "-out", pair.key, "2048")
    _openssl(
        "req", "-x509", "-new", "-key", pair.key, "-days", "2", "-subj", f"/CN={name}",
        "-addext", "basicConstraints=critical,CA:TRUE",
        "-addext", "keyUsage=critical,keyCertSign,cRLSign,digitalSignature",
        "-out", pair.cert,
    )  # fmt: skip
    return pair


def sign(
    ca: KeyPair,
    folder: Path,
    name: str,
    *,
    common_name: str,
    organisation: str | None = None,
    sans: tuple[str, ...] = (),
    usage: str = "serverAuth,clientAuth",
) -> KeyPair:
    """A leaf certificate signed by `ca`; `sans` as openssl spells them (IP:..., DNS:...)."""
    folder.mkdir(parents=True, exist_ok=True)
    pair = KeyPair(folder / f"{name}.crt", folder / f"{name}.key")
    subject = f"/CN={common_name}" + (f"/O={organisation}" if organisation else "")
    csr = folder / f"{name}.csr"
    ext = folder / f"{name}.ext"
    lines = ["basicConstraints=CA:FALSE", f"extendedKeyUsage={usage}"]
    if sans:
        lines.append("subjectAltName=" + ",".join(sans))
    ext.write_text("\n".join(lines) + "\n")
    _openssl("genrsa", "-out", pair.key, "2048")
    _openssl("req", "-new", "-key", pair.key, "-subj", subject, "-out", csr)
    _openssl(
        "x509", "-req", "-in", csr, "-CA", ca.cert, "-CAkey", ca.key, "-CAcreateserial",
        "-days", "2", "-extfile", ext, "-out", pair.cert,
    )  # fmt: skip
    return pair


def make_rsa_pair(folder: Path, name: str) -> tuple[Path, Path]:
    """A bare RSA key pair (the service-account token signer): private, public."""
    private, public = folder / f"{name}.key", folder / f"{name}.pub"
    _openssl("genrsa", "-out", private, "2048")
    _openssl("rsa", "-in", private, "-pubout", "-out", public)
    return private, public
