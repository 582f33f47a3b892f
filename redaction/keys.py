"""The pseudonym key: resolved apart from config, never written anywhere but a demo key file.

Pseudonyms must be the same across steps, cases, shards and nightly versions, so they are keyed
(HMAC) rather than salted per run; whoever holds the key can test a guess, so the key is a secret.
Resolution order: the ``GOLDEN_PSEUDONYM_KEY`` environment variable, then a Prefect Secret block
named in config, then (demo only) a local key file created with mode 0600 on first use. Manifests
and reports record only ``key_id``, a short hash that names the key without revealing it.
"""

from __future__ import annotations

import hashlib
import math
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from golden_distill.datasets.prefect_secret import read_secret_block

ENV_VAR = "GOLDEN_PSEUDONYM_KEY"
MIN_KEY_BYTES = 32


class PseudonymKeyError(RuntimeError):
    """No usable pseudonym key (missing or too short). The message never holds key material."""


#: Least estimated entropy of a key (bits): byte frequencies times length.
MIN_KEY_BITS = 128


def key_weakness(secret: bytes) -> str | None:
    """Why ``secret`` is too weak to key pseudonyms (never quoting it), or ``None``."""
    if any(b in b" \t\r\n" for b in secret):
        return "it contains whitespace"
    if len(set(secret)) == 1:
        return "it is one repeated character"
    n = len(secret)
    per_byte = -sum(c / n * math.log2(c / n) for c in (secret.count(b) for b in set(secret)))
    if per_byte * n < MIN_KEY_BITS:
        return f"about {per_byte * n:.0f} bits of entropy, at least {MIN_KEY_BITS} are required"
    return None


@dataclass(frozen=True, slots=True)
class PseudonymKey:
    """Key material plus where it came from. ``repr`` shows the key id only."""

    secret: bytes = field(repr=False)
    source: str = "env"  # env | prefect | file | test

    def __post_init__(self) -> None:
        if len(self.secret) < MIN_KEY_BYTES:  # bytes, not characters
            raise PseudonymKeyError(
                f"pseudonym key from {self.source} is {len(self.secret)} bytes; "
                f"at least {MIN_KEY_BYTES} are required"
            )
        weak = key_weakness(self.secret)
        if weak:
            raise PseudonymKeyError(f"pseudonym key from {self.source} is refused: {weak}")

    @property
    def key_id(self) -> str:
        """A short, stable name for the key (safe to publish: a hash, not the key)."""
        return "k_" + hashlib.sha256(b"golden-distill key id\x00" + self.secret).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class KeyResolution:
    key: PseudonymKey
    created_file: Path | None = None  # set when a demo key file was created just now


def read_or_create_key_file(path: Path) -> tuple[bytes, bool]:
    """Read a local key file, creating it (mode 0600, 64 hex chars) when absent."""
    path = Path(path)
    if path.exists():
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise PseudonymKeyError(
                f"key file {path} is readable by others (mode {mode:o}); chmod 600"
            )
        return path.read_bytes().strip(), False
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(secrets.token_hex(32) + "\n")
    return path.read_bytes().strip(), True


def resolve_key(
    *,
    secret_block: str | None = None,
    local_key_file: str | Path | None = None,
    environ: dict[str, str] | None = None,
) -> KeyResolution:
    """Find the pseudonym key (env, then Prefect Secret block, then demo key file)."""
    env = os.environ if environ is None else environ
    value = env.get(ENV_VAR)
    if value:
        return KeyResolution(PseudonymKey(value.encode(), "env"))
    if secret_block:
        try:
            material = read_secret_block(secret_block)
        except Exception as exc:  # the block is missing or the API is unreachable
            raise PseudonymKeyError(
                f"cannot load Prefect Secret block {secret_block!r} ({type(exc).__name__})"
            ) from None
        return KeyResolution(PseudonymKey(material, "prefect"))
    if local_key_file:
        material, created = read_or_create_key_file(Path(local_key_file))
        return KeyResolution(
            PseudonymKey(material, "file"), Path(local_key_file) if created else None
        )
    raise PseudonymKeyError(
        f"no pseudonym key: set {ENV_VAR} (>= {MIN_KEY_BYTES} bytes), or name a Prefect Secret "
        "block in redaction.key_secret_block, or (demo only) redaction.local_key_file"
    )
