"""Keeping credentials out of everything the library shows: names, messages, tables, run tags.

A retriever given as ``https://alice:S3CRET@host/search`` must never print its password, and a
service that echoes a request's ``Authorization`` header into an error body must not carry it
into a report or a journal. :func:`redact_url` hides the password in every URL of a text;
:func:`redact_secrets` hides known secret values wherever they appear.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["REDACTED", "redact_secrets", "redact_url"]

REDACTED = "***"
"""What stands in for a hidden credential."""

# scheme://user:password@ — the password is everything up to the last "@" before the host.
_USERINFO = re.compile(r"(?P<scheme>\b[A-Za-z][A-Za-z0-9+.-]*://)(?P<userinfo>[^/?#\s@]*)@")


def redact_url(text: str) -> str:
    """``text`` with the password of every URL's user information replaced by ``***``.

    The user name stays (it says which account was used); a user name without a password is
    kept as it is. Text without URLs is returned unchanged.

    :param text: a URL, or any text that may hold URLs.

    >>> redact_url("http://alice:S3CRETPW@localhost:8000/search?q=x")
    'http://alice:***@localhost:8000/search?q=x'
    >>> redact_url("bm25 and https://bob@host/ (no password)")
    'bm25 and https://bob@host/ (no password)'
    """

    def hide(match: re.Match[str]) -> str:
        user, colon, _password = match["userinfo"].partition(":")
        return f"{match['scheme']}{user}{':' + REDACTED if colon else ''}@"

    return _USERINFO.sub(hide, text)


def redact_secrets(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every occurrence of each secret replaced by ``***``, and URLs redacted.

    Empty and very short secrets (under 4 characters) are not searched for: hiding every
    ``"a"`` of a message would hide nothing worth hiding and ruin the message.

    :param text: the text to clean, such as an error body a service sent back.
    :param secrets: the values to hide (passwords, header values, tokens).

    >>> redact_secrets("echo: Authorization: Basic YWxpY2U6UzNDUkVU", ["Basic YWxpY2U6UzNDUkVU"])
    'echo: Authorization: ***'
    """
    for secret in sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return redact_url(text)
