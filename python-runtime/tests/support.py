"""Starts a real runtime server process (loopback port or Unix socket) and talks HTTP to it."""

from __future__ import annotations

import http.client
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time

TESTS_DIR = os.path.dirname(os.path.abspath(__file__))
RUNTIME_DIR = os.path.dirname(TESTS_DIR)
FIXTURES_DIR = os.path.join(TESTS_DIR, "fixtures")


def fixture(name: str) -> str:
    with open(os.path.join(FIXTURES_DIR, name), encoding="utf-8") as fh:
        return fh.read()


class UnixHTTPConnection(http.client.HTTPConnection):
    """http.client over a Unix socket (the server's --socket)."""

    def __init__(self, path: str, timeout: float = 60) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        sock.connect(self.socket_path)
        self.sock = sock


class RuntimeServer:
    """One `python -m platform_runtime.server --port 0` process. With `secret`, the server gets
    --control-secret-stdin and the secret on its stdin (kept open: its end stops the server),
    and every request carries it."""

    def __init__(self, *extra_args: str, secret: str | None = None, pythonpath: str | None = None,
                 stderr=None, quiet: bool = True) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(
            [RUNTIME_DIR] + ([pythonpath] if pythonpath else [])
            + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        args = [sys.executable, "-m", "platform_runtime.server", "--port", "0",
                *(["--quiet"] if quiet else []), *extra_args]
        if secret is not None:
            args.append("--control-secret-stdin")
        self.proc = subprocess.Popen(
            args, cwd=RUNTIME_DIR, env=env, stdout=subprocess.PIPE, stderr=stderr,
            stdin=subprocess.PIPE if secret is not None else subprocess.DEVNULL)
        if secret is not None:
            self.proc.stdin.write(secret.encode() + b"\n")
            self.proc.stdin.flush()
        ready, _, _ = select.select([self.proc.stdout], [], [], 60)
        line = self.proc.stdout.readline() if ready else b""
        if not line:
            self.proc.kill()
            self.proc.wait()
            raise RuntimeError("runtime server did not announce its port")
        self.announce = json.loads(line)
        self.host = self.announce.get("host")
        self.port = self.announce.get("port")
        self.socket_path = self.announce.get("socket")
        self.egress_port = self.announce.get("egressPort")
        self.authorization = f"Bearer {secret}" if secret is not None else None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdout, self.proc.stdin, self.proc.stderr):
            if stream is not None:
                stream.close()

    # HTTP --------------------------------------------------------------------------------
    def _conn(self, timeout: float = 60) -> http.client.HTTPConnection:
        if self.socket_path:
            return UnixHTTPConnection(self.socket_path, timeout=timeout)
        return http.client.HTTPConnection(self.host, self.port, timeout=timeout)

    def _headers(self, headers: dict | None, authorize: bool = True) -> dict:
        base = {"Authorization": self.authorization} if self.authorization and authorize else {}
        return {**base, **(headers or {})}

    def request_json(self, method: str, path: str, body=None, raw: bytes | None = None,
                     headers: dict | None = None, authorize: bool = True):
        """(status, JSON body, response). `headers` override the defaults; authorize=False
        sends no Authorization header at all."""
        conn = self._conn()
        try:
            data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
            sent = {"Content-Type": "application/json"} if data is not None else {}
            conn.request(method, path, body=data,
                         headers=self._headers({**sent, **(headers or {})}, authorize))
            resp = conn.getresponse()
            payload = resp.read()
            return resp.status, (json.loads(payload) if payload else None), resp
        finally:
            conn.close()

    def stream(self, body: dict, timeout: float = 60):
        """Yields (monotonic time, event) as each NDJSON line arrives."""
        conn = self._conn(timeout)
        try:
            conn.request("POST", "/invoke", body=json.dumps(body).encode(),
                         headers=self._headers({"Content-Type": "application/json"}))
            resp = conn.getresponse()
            if resp.status != 200:
                raise AssertionError(f"/invoke answered {resp.status}: {resp.read()[:500]!r}")
            assert resp.getheader("Content-Type") == "application/x-ndjson"
            while True:
                line = resp.readline()
                if not line:
                    break
                yield time.monotonic(), json.loads(line)
        finally:
            conn.close()

    def invoke(self, body: dict, timeout: float = 60) -> list[dict]:
        return [event for _t, event in self.stream(body, timeout)]

    def agent(self, source: str, prompt: str = "hello", **extra) -> list[dict]:
        return self.invoke({"kind": "agent", "source": source, "prompt": prompt, **extra})

    def action(self, source: str, event: dict | None = None, **extra) -> list[dict]:
        return self.invoke({"kind": "action", "source": source, "event": event or {}, **extra})


def of_type(events: list[dict], kind: str) -> list[dict]:
    return [e for e in events if e.get("type") == kind]


def error_of(events: list[dict]) -> dict | None:
    errors = of_type(events, "error")
    return errors[0] if errors else None


def text_of(events: list[dict]) -> str:
    return "".join(e["data"] for e in of_type(events, "text"))


def message_of(events: list[dict]) -> str:
    error = error_of(events)
    return error.get("message", "") if error else ""


def stage_of(events: list[dict]) -> str:
    """Which layer stopped an invocation, from its events (used by the escape corpus)."""
    results = of_type(events, "result")
    if results and results[0].get("body") == "ESCAPED":
        return "ESCAPED"
    error = error_of(events)
    if error is None:
        return "not stopped" if not results else f"contained ({results[0].get('body')!r})"
    code, message = error.get("code"), error.get("message", "")
    if code == "TIMEOUT":
        return "timeout"
    if code == "MEMORY_LIMIT_EXCEEDED":
        return "memory limit"
    for tag, stage in (("[sandbox:audit]", "audit hook"), ("[sandbox:import]", "import guard"),
                       ("[sandbox:builtins]", "guarded builtins"),
                       ("[sandbox:library]", "library patch"),
                       ("[sandbox:annotations]", "annotation check")):
        if tag in message:
            return stage
    if "Operation not permitted" in message:
        return "seccomp"
    if error.get("errorType") == "NameError":
        return "restricted builtins"
    return f"other: {code}: {message[:120]}"
