"""Credentials and account names inside command lines, headers and log lines: a session id in
``Set-Cookie``, the password of ``sshpass -p``, ``user=`` / ``username=`` in a log line.

detect-secrets (``secrets.py``) looks for high-entropy strings and known token formats; an
upper-case hex session id, a short typed password or a user name in a log line pass it. These
rows are the shapes those tools print; written here because no maintained recognizer has them.
"""

from __future__ import annotations

from golden_distill.redaction.recognizers.base import CuedPattern, Keywords, RecognizerSpec
from golden_distill.redaction.recognizers.pattern_table import PatternTable

ROWS = [
    CuedPattern("set_cookie_value",
                r"(?<=(?i:set-cookie|cookie):\s*(?:[^=;\s]+=[^;\s]*;\s*)*[^=;\s]+=)[^;\s\"']{6,}",
                0.6, "SECRET"),
    CuedPattern("sshpass_password",
                r"(?<=\bsshpass\s+-p\s*(['\"]?))[^\s'\"]+", 0.7, "SECRET"),
    CuedPattern("user_in_log_line",
                r"(?<=(?i:\b(?:user|username|login|uid|account)=)[\"']?)"
                r"[A-Za-z][A-Za-z0-9._@+-]{1,63}", 0.6, "USERNAME"),
]  # fmt: skip

SPEC = RecognizerSpec(
    name="credentials_in_text",
    entities=("SECRET", "USERNAME"),
    prefilter=Keywords("cookie", "sshpass", "user=", "username=", "login=", "uid=", "account="),
    build=lambda cfg: PatternTable("CredentialsInTextRecognizer", ROWS),
)
