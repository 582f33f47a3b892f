"""Pseudonym key resolution: environment first, 32-byte minimum, demo key file with mode 0600."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from golden_distill.redaction.keys import (
    ENV_VAR,
    PseudonymKey,
    PseudonymKeyError,
    read_or_create_key_file,
    resolve_key,
)

STRONG = "env-key-Vb7Nm2Qw9Er4Ty8Ui1Op6As3Df5Gh0Jk"


def test_environment_key_wins(tmp_path: Path) -> None:
    res = resolve_key(local_key_file=tmp_path / "k", environ={ENV_VAR: STRONG})
    assert res.key.secret == STRONG.encode() and res.key.source == "env"
    assert not (tmp_path / "k").exists()


def test_short_key_is_refused_without_echoing_it() -> None:
    with pytest.raises(PseudonymKeyError) as err:
        resolve_key(environ={ENV_VAR: "tooshortsecret"})
    assert "tooshortsecret" not in str(err.value)
    assert "32" in str(err.value)


def test_no_key_anywhere_is_a_clear_error() -> None:
    with pytest.raises(PseudonymKeyError, match=ENV_VAR):
        resolve_key(environ={})


def test_demo_key_file_is_created_private_and_reused(tmp_path: Path) -> None:
    path = tmp_path / "secrets" / "pseudonym.key"
    first = resolve_key(local_key_file=path, environ={})
    assert first.created_file == path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    second = resolve_key(local_key_file=path, environ={})
    assert second.created_file is None
    assert second.key.key_id == first.key.key_id


def test_world_readable_key_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "k"
    path.write_text("x" * 64)
    path.chmod(0o644)
    with pytest.raises(PseudonymKeyError, match="chmod 600"):
        read_or_create_key_file(path)


def test_key_id_differs_per_key() -> None:
    assert PseudonymKey(STRONG.encode()).key_id != PseudonymKey(STRONG.encode()[::-1]).key_id


@pytest.mark.parametrize(
    ("key", "why"),
    [
        (b"a" * 40, "repeated"),
        (b"Vb7Nm2Qw9Er4Ty8U i1Op6As3Df5Gh0Jk", "whitespace"),
        (b" Vb7Nm2Qw9Er4Ty8Ui1Op6As3Df5Gh0Jk", "whitespace"),
        (b"abababababababababababababababababab", "bits of entropy"),
        (b"password" * 4, "bits of entropy"),
    ],
)
def test_low_entropy_keys_are_refused_without_echoing_them(key: bytes, why: str) -> None:
    with pytest.raises(PseudonymKeyError, match=why) as err:
        PseudonymKey(key)
    assert key.decode().strip() not in str(err.value)


def test_key_length_is_counted_in_bytes() -> None:
    # 11 characters, 33 bytes of UTF-8: long enough by bytes; 20 ASCII characters are not
    res = resolve_key(environ={ENV_VAR: "钥匙是秘密的不要给别人看"})
    assert len(res.key.secret) >= 32
    with pytest.raises(PseudonymKeyError, match="20 bytes"):
        resolve_key(environ={ENV_VAR: "Vb7Nm2Qw9Er4Ty8Ui1Op"})
