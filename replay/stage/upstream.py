"""What the stage says to the model server and what it keeps to itself.

- :class:`Upstream`: the model server's base URL, joined with a route without losing its query
  string (``?key=…`` is how some servers take their key), and every secret in it — the
  user-info and each query value — known so that no log line shows it.
- :class:`Redactor`: a logging filter that writes each such secret (and the client key) as
  ``***`` in every record of the loggers it is attached to, the HTTP client's own included.
- The client key: compared in constant time, its scheme (``Bearer``) read case-insensitively,
  and dropped from every header it arrived in before the request goes on.
- :class:`SurrogateJoiner`: a model server that splits an emoji into its two UTF-16 halves
  across stream chunks (``"\\ud83d"`` then ``"\\ude00"``) gets them joined again; a half that
  never finds its pair becomes U+FFFD, so nothing the stage writes is invalid UTF-8.
"""

from __future__ import annotations

import functools
import hmac
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from yarl import URL

from .client import endpoint

REDACTED = "***"
# Loggers whose records may carry the upstream URL or a header: the HTTP client's and ours.
LOGGERS = ("aiohttp", "aiohttp.client", "aiohttp.internal", "gmtags.stage", "gmtags.access",
           "gmtags.cache")
KEY_HEADER = "x-gmtags-key"
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class Upstream:
    """The model server's OpenAI base URL (``http://host:port/v1``, maybe with user-info and a
    query string)."""

    url: URL

    @classmethod
    def parse(cls, text: str) -> Upstream:
        """Raises ``ValueError`` for what is not an http(s) URL."""
        try:
            url = URL(text)
            host = url.host
        except ValueError as failure:
            raise ValueError(f"--upstream is not a URL ({failure})") from None
        if url.scheme not in ("http", "https") or not host:
            raise ValueError("--upstream must be an http:// or https:// URL with a host")
        return cls(url)

    @property
    def root(self) -> Upstream:
        """The backend's root: the URL without its trailing ``/v1`` (where llama.cpp's
        ``/completion`` and KoboldCpp's ``/api/...`` routes are); the same URL without one."""
        path = self.url.raw_path.rstrip("/")
        if not path.endswith("/v1"):
            return self
        return Upstream(self.url.with_path(path[:-3] or "/", encoded=True, keep_query=True))

    def endpoint(self, route: str) -> URL:
        """The base URL with ``/route`` added to its path; query and user-info kept (made
        once per route)."""
        return _endpoint(self.url, route)

    @property
    def secrets(self) -> tuple[str, ...]:
        """What must never be logged: the password, the user-info and every query value, as
        written and as decoded."""
        found: list[str] = []
        url = self.url
        if url.raw_user is not None or url.raw_password is not None:
            found.append(f"{url.raw_user or ''}:{url.raw_password or ''}")
            found.append(f"{url.user or ''}:{url.password or ''}")
        found.extend(value for value in (url.password, url.raw_password) if value)
        found.extend(value for _, value in url.query.items() if value)
        found.extend(pair.partition("=")[2] for pair in url.raw_query_string.split("&")
                     if pair.partition("=")[2])
        return tuple(sorted(set(found) - {":"}, key=len, reverse=True))

    @property
    def shown(self) -> str:
        """The URL as it may be printed: secrets replaced."""
        return redact(str(self.url), self.secrets)


@functools.lru_cache(maxsize=64)
def _endpoint(url: URL, route: str) -> URL:
    return endpoint(url, route)


def redact(text: str, secrets: Iterable[str]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, REDACTED)
    return text


class Redactor(logging.Filter):
    """Writes each secret as ``***`` in the records that pass (message and arguments)."""

    def __init__(self, secrets: Iterable[str]) -> None:
        super().__init__()
        self.secrets = tuple(sorted({s for s in secrets if s}, key=len, reverse=True))

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            message = record.getMessage()
            cleaned = redact(message, self.secrets)
            if cleaned != message:
                record.msg, record.args = cleaned, None
        return True

    def install(self, loggers: Iterable[str] = LOGGERS) -> None:
        for name in loggers:
            logger = logging.getLogger(name)
            if not any(isinstance(f, Redactor) and f.secrets == self.secrets
                       for f in logger.filters):
                logger.addFilter(self)


def presented_keys(headers: Mapping[str, str]) -> list[str]:
    """Every value a client may have sent its gmtags key as: ``X-Gmtags-Key``, and
    ``Authorization`` with any scheme word (``Bearer``, ``bearer``) or none."""
    found: list[str] = []
    for name, value in headers.items():
        if name.lower() == KEY_HEADER:
            found.append(value.strip())
        elif name.lower() == "authorization":
            found.append(value.strip())
            scheme, _, rest = value.strip().partition(" ")
            if rest and scheme.lower() == "bearer":
                found.append(rest.strip())
    return found


def same_key(candidate: str, key: str) -> bool:
    """Constant-time comparison (of the UTF-8 bytes: header values may be any text)."""
    return hmac.compare_digest(candidate.encode("utf-8", "surrogatepass"),
                               key.encode("utf-8", "surrogatepass"))


def is_key(value: str, key: str) -> bool:
    """Whether a header value is the key itself, or a scheme word and the key."""
    value = value.strip()
    _, _, rest = value.partition(" ")
    matched = same_key(value, key)
    matched = same_key(rest.strip(), key) or matched  # both compared: no early exit
    return matched


def without_key(headers: Mapping[str, str], key: str | None) -> dict[str, str]:
    """The headers to pass on: ``X-Gmtags-Key`` never, and no header that carries the key."""
    kept: dict[str, str] = {}
    for name, value in headers.items():
        if name.lower() == KEY_HEADER or (key is not None and is_key(value, key)):
            continue
        kept[name] = value
    return kept


class SurrogateJoiner:
    """Joins UTF-16 surrogate halves split across stream chunks; lone halves become U+FFFD."""

    def __init__(self) -> None:
        self._high = ""

    def feed(self, text: str) -> str:
        if self._high:
            text, self._high = self._high + text, ""
        if text and "\ud800" <= text[-1] <= "\udbff":
            text, self._high = text[:-1], text[-1]
        return _joined(text)

    def finish(self) -> str:
        rest, self._high = self._high, ""
        return "\ufffd" if rest else ""


def _joined(text: str) -> str:
    """``text`` with each high-low surrogate pair made one character, other halves U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    out: list[str] = []
    at = 0
    while at < len(text):
        char = text[at]
        if "\ud800" <= char <= "\udbff" and at + 1 < len(text) and \
                "\udc00" <= text[at + 1] <= "\udfff":
            out.append(chr(0x10000 + ((ord(char) - 0xD800) << 10) + ord(text[at + 1]) - 0xDC00))
            at += 2
            continue
        out.append("\ufffd" if "\ud800" <= char <= "\udfff" else char)
        at += 1
    return "".join(out)


__all__ = ["Redactor", "SurrogateJoiner", "Upstream", "presented_keys", "redact",
           "same_key", "without_key"]
