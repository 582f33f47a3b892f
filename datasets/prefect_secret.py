"""Reading a secret from a Prefect Secret block: the one place the domain code touches Prefect.

Two secrets may be kept in Prefect Secret blocks instead of environment variables: the
pseudonym key (``redaction.key_secret_block``, read by ``redaction/keys.py``) and the signing
key (``publish.signing_key_secret_block``, read by ``datasets/store/signing.py``). Both layers
read it through this module, which sits in the lowest layer so that the store does not import
redaction to reach it. Prefect is imported only when a block is configured and read, so the
reader install (no Prefect) never needs it.
"""

from __future__ import annotations


def read_secret_block(block_name: str) -> bytes:
    """The secret held by the Prefect Secret block ``block_name``, as bytes.

    Raises whatever Prefect raises (a missing block, an unreachable API); callers turn that into
    their own error without quoting the value.
    """
    from prefect.blocks.system import Secret  # lazy: only when a block is configured

    value = Secret.load(block_name).get()
    return value.encode() if isinstance(value, str) else bytes(value)
