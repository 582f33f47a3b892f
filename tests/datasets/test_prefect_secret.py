"""Keys kept in Prefect Secret blocks: the one read both the pseudonym key and the signing key
use (`datasets/prefect_secret.py`), against a real Prefect API (the test harness's)."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from golden_distill.datasets.prefect_secret import read_secret_block
from golden_distill.datasets.store.signing import SigningKeyError, signing_key_from_env
from golden_distill.redaction.keys import PseudonymKeyError, resolve_key

pytestmark = pytest.mark.slow

PSEUDONYM_SECRET = "block-held-pseudonym-key-Vb7Nm2Qw9Er4Ty8Ui1Op6As3Df5"


@pytest.fixture(scope="module")
def blocks(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """Two Secret blocks saved through a temporary Prefect API; PREFECT_HOME in a temp folder."""
    previous = os.environ.get("PREFECT_HOME")
    os.environ["PREFECT_HOME"] = str(tmp_path_factory.mktemp("prefect-home"))
    from prefect.blocks.system import Secret
    from prefect.testing.utilities import prefect_test_harness

    pem = Ed25519PrivateKey.generate().private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    try:
        with prefect_test_harness(server_startup_timeout=180):
            Secret(value=PSEUDONYM_SECRET).save("pseudonym-key")
            Secret(value=pem.decode()).save("signing-key")
            yield {"pseudonym": "pseudonym-key", "signing": "signing-key", "pem": pem.decode()}
    finally:
        if previous is None:
            os.environ.pop("PREFECT_HOME", None)
        else:
            os.environ["PREFECT_HOME"] = previous


def test_a_block_is_read_as_bytes(blocks):
    assert read_secret_block(blocks["pseudonym"]) == PSEUDONYM_SECRET.encode()


def test_the_pseudonym_key_comes_from_its_block(blocks):
    key = resolve_key(secret_block=blocks["pseudonym"], environ={}).key
    assert key.source == "prefect" and key.secret == PSEUDONYM_SECRET.encode()


def test_the_signing_key_comes_from_its_block(blocks):
    key = signing_key_from_env(environ={}, secret_block=blocks["signing"])
    expected = serialization.load_pem_private_key(blocks["pem"].encode(), None)
    raw = serialization.Encoding.Raw, serialization.PublicFormat.Raw
    assert key is not None and key.public_key().public_bytes(*raw) == (
        expected.public_key().public_bytes(*raw)
    )


def test_a_missing_block_fails_clearly_for_both_keys(blocks):
    with pytest.raises(PseudonymKeyError, match="no-such-block"):
        resolve_key(secret_block="no-such-block", environ={})
    with pytest.raises(SigningKeyError, match="no-such-block"):
        signing_key_from_env(environ={}, secret_block="no-such-block")
