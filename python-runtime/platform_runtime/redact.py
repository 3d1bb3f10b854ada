"""Secrets of a run, scrubbed from what the runtime reports about it.

The server knows every secret it hands a run: the values of `env` but the few that only name
things (PUBLIC_ENV), the values inside JSON held there (such as SVC_KEYS_JSON), an action event's `keys`, the egress proxy credential and
the platformCalls headers. Any of them with 8 or more characters is replaced by "[REDACTED]" in
`error` messages, `log` lines and the server's own stderr lines for the run, so an exception that
quotes a key (`raise ValueError(event["keys"]["svc"])`) or a library that logs a header does not
carry it into the platform's logs and error responses.

`text`, `result` and `messages` are left alone: they are what the code deliberately returns to
its caller, who may legitimately receive a value derived from a key.
"""

from __future__ import annotations

import base64
import json
import re
from urllib.parse import unquote, urlsplit

REDACTED = "[REDACTED]"
# Shorter values are too likely to occur by chance in ordinary text ("true", "eu-west").
MIN_SECRET_CHARS = 8
_MAX_DEPTH = 20


class Scrubber:
    def __init__(self, secrets) -> None:
        forms: set[str] = set()
        for secret in secrets:
            if isinstance(secret, str) and len(secret) >= MIN_SECRET_CHARS:
                # Also as it appears inside a JSON string or a Python repr (quotes, backslashes
                # and non-ASCII characters escaped).
                forms.update((secret, json.dumps(secret)[1:-1], repr(secret)[1:-1]))
        # Longest first, so a secret containing another is replaced whole.
        ordered = sorted((f for f in forms if len(f) >= MIN_SECRET_CHARS), key=len, reverse=True)
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def __call__(self, text):
        if self._pattern is None or not isinstance(text, str):
            return text
        return self._pattern.sub(REDACTED, text)


# Run variables that name things rather than hold secrets; scrubbing them would turn every
# "us-east-1" in an error into "[REDACTED]". The platform's side keeps the same list
# (PUBLIC_RUN_ENV in functions/runtimes/compute.ts).
PUBLIC_ENV = frozenset({"AWS_REGION", "AWS_DEFAULT_REGION", "SVC_AGENT_ID", "SVC_CONVERSATION_ID", "SVC_ACTION_ID",
                        "SVC_PLATFORM_MCP_URL"})


def run_secrets(req: dict) -> list[str]:
    """Every secret value of a parsed /invoke request (server.parse_invoke)."""
    found: list[str] = []
    for name, value in req.get("env", {}).items():
        if name in PUBLIC_ENV:
            continue
        found.append(value)
        found.extend(_json_strings(value))
    if req.get("kind") == "action":
        found.extend(_strings(req.get("event", {}).get("keys")))
    for value in (req.get("platformCalls") or {}).get("headers", {}).values():
        found.append(value)
        found.extend(value.split())  # "Bearer <token>": the token alone too
    found.extend(proxy_secrets(req.get("egressProxy")))
    return found


def proxy_secrets(url: str | None) -> list[str]:
    """The proxy credential as it may appear: the password, raw and decoded, and the Basic
    credential a client builds from it (Proxy-Authorization)."""
    if not url:
        return []
    parts = urlsplit(url)
    if parts.password is None:
        return []
    user, password = unquote(parts.username or ""), unquote(parts.password)
    basic = base64.b64encode(f"{user}:{password}".encode("utf-8")).decode("ascii")
    return [parts.password, password, basic]


def _json_strings(value: str) -> list[str]:
    text = value.strip()
    if not text.startswith(("{", "[")):
        return []
    try:
        return _strings(json.loads(text))
    except (ValueError, RecursionError):
        return []


def _strings(value, depth: int = 0) -> list[str]:
    """String values (not keys) inside JSON data."""
    if depth > _MAX_DEPTH:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return [s for item in value for s in _strings(item, depth + 1)]
    return []
