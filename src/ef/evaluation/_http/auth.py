"""HttpRetriever's credentials: URL user information as Basic auth, headers checked, secrets known.

Credentials in the URL (``http://alice:S3CRET@host/search``) are taken out of it and sent as a
Basic ``Authorization`` header built here, so that both HTTP clients (aiohttp on asyncio,
httpcore on trio) send the same bytes: the client libraries never see them in a URL, where
aiohttp would use them and httpcore would drop them. Every credential-bearing value is also
kept as a *secret*, for :func:`~ef.evaluation._redact.redact_secrets` to hide wherever a
service could echo it back (an error body, a library's message).
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import NamedTuple
from urllib.parse import SplitResult, unquote, urlunsplit

from ef.evaluation._redact import REDACTED

__all__ = ["RequestTarget", "request_target"]

# RFC 9110 field names are tokens; values may not hold line breaks or NUL (header injection).
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_FORBIDDEN_IN_VALUE = re.compile(r"[\r\n\x00]")
# Headers whose values describe the request and carry no secret; all others are hidden when echoed.
_PLAIN_HEADERS = frozenset(
    {
        "accept",
        "accept-encoding",
        "accept-language",
        "cache-control",
        "connection",
        "content-language",
        "content-type",
        "pragma",
        "user-agent",
    }
)


class RequestTarget(NamedTuple):
    """Where requests go and what they carry, the credentials taken out of the URL.

    :ivar url: the URL without its user information, for the HTTP clients.
    :ivar headers: the headers to send, with ``Authorization`` from the URL's credentials.
    :ivar secrets: the values to hide in anything shown or recorded.
    """

    url: str
    headers: dict[str, str]
    secrets: tuple[str, ...]


def _checked_headers(headers: Mapping[str, str] | None) -> dict[str, str]:
    if headers is None:
        return {}
    if not isinstance(headers, Mapping):
        raise TypeError(f"headers must be a mapping of names to values, got {headers!r}")
    checked: dict[str, str] = {}
    for name, value in headers.items():
        if not isinstance(name, str) or not _TOKEN.fullmatch(name):
            raise ValueError(f"headers: {name!r} is not a valid header name")
        if not isinstance(value, str):
            # The value is not shown: it may be a key.
            raise TypeError(f"headers[{name!r}] must be a string, got {type(value).__name__}")
        if _FORBIDDEN_IN_VALUE.search(value):
            raise ValueError(f"headers[{name!r}] holds a line break or NUL")
        if any(name.lower() == seen.lower() for seen in checked):
            raise ValueError(f"headers: {name!r} is given twice (header names ignore case)")
        checked[name] = value
    return checked


def _header_secrets(headers: Mapping[str, str]) -> list[str]:
    secrets = []
    for name, value in headers.items():
        if name.lower() in _PLAIN_HEADERS:
            continue
        secrets.append(value)
        # "Bearer <token>", "Basic <token>": the token alone may be echoed too.
        scheme, _, token = value.strip().partition(" ")
        if token.strip() and scheme.isalpha():
            secrets.append(token.strip())
    return secrets


def request_target(parts: SplitResult, headers: Mapping[str, str] | None) -> RequestTarget:
    """Take the credentials out of the URL ``parts`` and check the ``headers``.

    A user name and password in the URL are percent-decoded and sent as Basic auth, encoded as
    UTF-8 (RFC 7617); a user name alone is sent with an empty password.

    :param parts: the split URL.
    :param headers: the extra headers asked for.
    :raises ValueError: for a header name that is not a token, a value holding a line break, a
        name given twice, or credentials in the URL together with an ``Authorization`` header.
    :raises TypeError: for headers that are not a mapping of strings.

    >>> from urllib.parse import urlsplit
    >>> target = request_target(urlsplit("http://alice:pa%20ss@h/s"), {"Accept": "*/*"})
    >>> target.url, target.headers
    ('http://h/s', {'Accept': '*/*', 'Authorization': 'Basic YWxpY2U6cGEgc3M='})
    >>> "pa ss" in target.secrets and "YWxpY2U6cGEgc3M=" in target.secrets
    True
    """
    checked = _checked_headers(headers)
    secrets = _header_secrets(checked)
    userinfo, at, host = parts.netloc.rpartition("@")
    if not at:
        return RequestTarget(urlunsplit(parts), checked, tuple(secrets))
    url = urlunsplit(parts._replace(netloc=host))
    raw_user, _, raw_password = userinfo.partition(":")
    if not raw_user and not raw_password:
        return RequestTarget(url, checked, tuple(secrets))
    if any(name.lower() == "authorization" for name in checked):
        raise ValueError(
            f"the URL carries credentials ({raw_user or '…'}:{REDACTED}@) and headers has an "
            "Authorization header: give one or the other"
        )
    user, password = unquote(raw_user), unquote(raw_password)
    token = base64.b64encode(f"{user}:{password}".encode()).decode("ascii")
    checked["Authorization"] = f"Basic {token}"
    secrets += [f"Basic {token}", token]
    if password:
        secrets += [f"{user}:{password}", password, raw_password]
    return RequestTarget(url, checked, tuple(secrets))
