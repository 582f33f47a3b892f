"""Signed versions: a detached Ed25519 signature of a version's manifest (``manifest.sig``).

Why: a checksum in a manifest only proves the files match the manifest; whoever can edit the
files can edit the manifest too. A signature made with a private key the store never holds
proves the manifest (and through its sha256 entries, every file, the counts, the key id, the
lineage and the config) is what the publisher wrote.

* The private key comes from ``GOLDEN_SIGNING_KEY`` (PEM text, or the path of a PEM file), else
  a Prefect Secret block (``publish.signing_key_secret_block``). Never from config or the repo.
* ``manifest.sig`` is small JSON next to the manifest: ``format``, ``algorithm`` (``ed25519``),
  ``key_id`` (``sk_`` + 16 hex of sha256 of the raw public key: names the key, reveals nothing)
  and ``signature`` (base64 of the signature over the manifest's exact bytes).
* Verifiers take public keys explicitly (``--public-key``, ``open_set(public_key=...)``) or from
  the store's ``trusted_keys/*.pem``. With a key to check against, an unsigned version, a
  signature by another key, or any byte changed in the manifest is refused.
"""

from __future__ import annotations

import base64
import hashlib
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from golden_distill.datasets.store.fs import StoreFS
from golden_distill.datasets.store.manifest import ManifestError

SIGNING_KEY_ENV = "GOLDEN_SIGNING_KEY"
#: The consumer's pinned public key (PEM text or the path of a PEM file): used by every reader
#: entry point when no key is passed explicitly, and always instead of ``trusted_keys/``.
PUBLIC_KEY_ENV = "GOLDEN_PUBLIC_KEY"
SIGNATURE_NAME = "manifest.sig"
TRUSTED_KEYS_DIR = "trusted_keys"
SIGNATURE_FORMAT = "golden-manifest-sig/1"

#: What a caller may pass as public keys: a key, PEM bytes/text, a path, or several of those.
PublicKeys = Ed25519PublicKey | bytes | str | Path | Iterable[Ed25519PublicKey | bytes | str | Path]


class SignatureError(ManifestError):
    """A signature is missing, malformed, by an untrusted key, or does not match the manifest."""


class SigningKeyError(ValueError):
    """The configured signing key cannot be used (the message never holds key material)."""


def public_key_id(key: Ed25519PublicKey) -> str:
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sk_" + hashlib.sha256(raw).hexdigest()[:16]


def _pem_or_file(value: str | bytes, what: str) -> bytes:
    data = value.encode() if isinstance(value, str) else bytes(value)
    if b"-----BEGIN" in data:
        return data
    path = Path(data.decode("utf-8", "replace").strip()).expanduser()
    try:
        return path.read_bytes()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise SigningKeyError(f"{what}: not PEM text and not a readable file ({reason})") from None


def load_private_key(value: str | bytes, what: str = SIGNING_KEY_ENV) -> Ed25519PrivateKey:
    """An Ed25519 private key from PEM text or the path of a PEM file."""
    try:
        key = serialization.load_pem_private_key(_pem_or_file(value, what), password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(f"{what}: not an unencrypted PEM private key") from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{what}: the key is not Ed25519")
    return key


def load_public_key(data: bytes, where: str) -> Ed25519PublicKey:
    """An Ed25519 public key from PEM bytes (``where`` names the source in errors)."""
    try:
        key = serialization.load_pem_public_key(data)
    except (ValueError, TypeError):
        raise SignatureError(f"{where}: not a PEM public key") from None
    if not isinstance(key, Ed25519PublicKey):
        raise SignatureError(f"{where}: the public key is not Ed25519")
    return key


def public_keys_from(value: PublicKeys | None) -> dict[str, Ed25519PublicKey] | None:
    """Normalise what a caller passed into ``{key_id: key}``; None when nothing was passed."""
    if value is None:
        return None
    if isinstance(value, Mapping):  # already normalised ({key_id: key})
        return dict(value)
    items = [value] if isinstance(value, Ed25519PublicKey | bytes | str | Path) else list(value)
    keys: dict[str, Ed25519PublicKey] = {}
    for item in items:
        if isinstance(item, Ed25519PublicKey):
            key = item
        elif isinstance(item, bytes) or (isinstance(item, str) and "-----BEGIN" in item):
            data = item.encode() if isinstance(item, str) else item
            key = load_public_key(data, "public key")
        else:
            try:
                data = Path(item).expanduser().read_bytes()
            except OSError as exc:
                raise SignatureError(f"public key {item}: cannot read ({exc.strerror})") from None
            key = load_public_key(data, f"public key {item}")
        keys[public_key_id(key)] = key
    return keys


def pinned_keys(
    value: PublicKeys | None = None, environ: Mapping[str, str] | None = None
) -> dict[str, Ed25519PublicKey] | None:
    """The keys a consumer pinned: ``value`` when given, else ``GOLDEN_PUBLIC_KEY`` (PEM text or
    a path), else None (the store's ``trusted_keys/`` apply). A pinned key always replaces
    ``trusted_keys/``: whoever can write the store can add a key there, not to the consumer."""
    if value is not None and not (isinstance(value, list | tuple) and not value):
        return public_keys_from(value)
    env = os.environ if environ is None else environ
    text = (env.get(PUBLIC_KEY_ENV) or "").strip()
    if not text:
        return None
    if "-----BEGIN" in text:
        return public_keys_from(text)
    return public_keys_from(Path(text))


def signing_key_from_env(
    environ: Mapping[str, str] | None = None, secret_block: str | None = None
) -> Ed25519PrivateKey | None:
    """The configured signing key: ``GOLDEN_SIGNING_KEY``, else the Prefect Secret block; None
    when neither is configured (versions are then published unsigned)."""
    env = os.environ if environ is None else environ
    value = env.get(SIGNING_KEY_ENV)
    if value:
        return load_private_key(value)
    if secret_block:
        from golden_distill.datasets.prefect_secret import read_secret_block

        try:
            material = read_secret_block(secret_block)
        except Exception as exc:  # the block is missing or the API is unreachable
            raise SigningKeyError(
                f"cannot load Prefect Secret block {secret_block!r} ({type(exc).__name__})"
            ) from None
        return load_private_key(material, f"Prefect Secret block {secret_block!r}")
    return None


def sign_manifest(manifest_bytes: bytes, key: Ed25519PrivateKey) -> bytes:
    """The ``manifest.sig`` bytes for these exact manifest bytes."""
    signature = base64.b64encode(key.sign(manifest_bytes)).decode()
    document = {
        "format": SIGNATURE_FORMAT,
        "algorithm": "ed25519",
        "key_id": public_key_id(key.public_key()),
        "signature": signature,
    }
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"


def read_signature(data: bytes, where: str) -> dict[str, Any]:
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise SignatureError(f"{where}: signature file is not valid JSON") from None
    if (
        not isinstance(document, dict)
        or document.get("format") != SIGNATURE_FORMAT
        or document.get("algorithm") != "ed25519"
        or not isinstance(document.get("key_id"), str)
        or not isinstance(document.get("signature"), str)
    ):
        raise SignatureError(f"{where}: not a {SIGNATURE_FORMAT} ed25519 signature file")
    return document


def verify_signature(
    manifest_bytes: bytes, signature_bytes: bytes, keys: Mapping[str, Ed25519PublicKey], where: str
) -> str:
    """Check the signature against the trusted ``keys``; returns the signer's key id."""
    document = read_signature(signature_bytes, where)
    key_id = document["key_id"]
    key = keys.get(key_id)
    if key is None:
        trusted = ", ".join(sorted(keys)) or "none"
        raise SignatureError(f"{where}: signed by key {key_id}, not a trusted key ({trusted})")
    try:
        key.verify(base64.b64decode(document["signature"], validate=True), manifest_bytes)
    except (InvalidSignature, ValueError):
        raise SignatureError(
            f"{where}: signature by {key_id} does not match the manifest (manifest edited)"
        ) from None
    return key_id


def trusted_keys(store: StoreFS) -> dict[str, Ed25519PublicKey]:
    """The store's ``trusted_keys/*.pem`` public keys (empty when the folder is absent)."""
    keys: dict[str, Ed25519PublicKey] = {}
    for name in store.list_names(TRUSTED_KEYS_DIR):
        if name.endswith(".pem"):
            rel = f"{TRUSTED_KEYS_DIR}/{name}"
            key = load_public_key(store.read_bytes(rel), store.display(rel))
            keys[public_key_id(key)] = key
    return keys


def public_key_pem(key: Ed25519PrivateKey | Ed25519PublicKey) -> bytes:
    """PEM of the public half (what goes into ``trusted_keys/`` or ``--public-key``)."""
    public = key.public_key() if isinstance(key, Ed25519PrivateKey) else key
    return public.public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
