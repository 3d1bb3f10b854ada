"""Headers for calls a run makes back to the platform.

An agent's MCP clients call the platform's MCP host. The platform gives each run a short-lived
credential of the resource owner and the run's lineage; this module adds them to every request the
run sends to the platform's own hosts, so agent sources hold no secrets and the MCP usage records
join the chat's. The values never enter `os.environ` or the user's module: user code can make the
calls but cannot read the credential.

Two client stacks are covered: `http.client` (what urllib and plain stdlib clients use) and
`httpx` (what the MCP Python SDK's streamable HTTP client uses), when it is installed.
"""

from __future__ import annotations

import http.client
import importlib.util


# Whether httpx is installed, settled once by `prepare()` in the fork server: looking for a
# package that is not installed walks sys.path, and every run would do it again.
_httpx_installed: bool | None = None


def prepare() -> None:
    """Called once by the fork server before its first fork."""
    global _httpx_installed
    _httpx_installed = importlib.util.find_spec("httpx") is not None


def _host_matches(entries: list[str], host: str, port: int | None) -> bool:
    host = host.lower().strip("[]")
    for entry in entries:
        entry = entry.lower()
        if ":" in entry and not entry.startswith("["):
            name, _, entry_port = entry.rpartition(":")
            if name == host and port is not None and entry_port == str(port):
                return True
        elif entry == host:
            return True
    return False


def install(hosts: list[str], headers: dict[str, str]) -> None:
    """Adds `headers` to requests for `hosts`; a header the caller set itself is left as it is."""
    if not hosts or not headers:
        return
    wanted = {name.lower(): value for name, value in headers.items()}
    _patch_http_client(hosts, wanted)
    _patch_httpx(hosts, wanted)


def _patch_http_client(hosts: list[str], headers: dict[str, str]) -> None:
    original_putrequest = http.client.HTTPConnection.putrequest
    original_putheader = http.client.HTTPConnection.putheader
    original_endheaders = http.client.HTTPConnection.endheaders

    def putrequest(self, *args, **kwargs):
        self._svc_sent = set()
        return original_putrequest(self, *args, **kwargs)

    def putheader(self, header, *values):
        name = header.decode("latin-1") if isinstance(header, bytes) else str(header)
        getattr(self, "_svc_sent", set()).add(name.lower())
        return original_putheader(self, header, *values)

    def endheaders(self, *args, **kwargs):
        if _host_matches(hosts, self.host, self.port):
            sent = getattr(self, "_svc_sent", set())
            for name, value in headers.items():
                if name not in sent:
                    original_putheader(self, name, value)
        return original_endheaders(self, *args, **kwargs)

    http.client.HTTPConnection.putrequest = putrequest
    http.client.HTTPConnection.putheader = putheader
    http.client.HTTPConnection.endheaders = endheaders


def _patch_httpx(hosts: list[str], headers: dict[str, str]) -> None:
    installed = _httpx_installed
    if installed is None:
        installed = importlib.util.find_spec("httpx") is not None
    if not installed:
        return
    import httpx  # noqa: PLC0415 - only when installed

    def add(request) -> None:
        if _host_matches(hosts, request.url.host, request.url.port):
            for name, value in headers.items():
                if name not in request.headers:
                    request.headers[name] = value

    original_send = httpx.Client.send
    original_async_send = httpx.AsyncClient.send

    def send(self, request, *args, **kwargs):
        add(request)
        return original_send(self, request, *args, **kwargs)

    async def async_send(self, request, *args, **kwargs):
        add(request)
        return await original_async_send(self, request, *args, **kwargs)

    httpx.Client.send = send
    httpx.AsyncClient.send = async_send
