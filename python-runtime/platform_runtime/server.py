"""HTTP front of the Python runtime.

    python3 -m platform_runtime.server --port 8080 [--host 127.0.0.1] [--socket PATH]
        [--control-secret-stdin] [--egress-socket PATH]

On start it prints one JSON line to stdout, {"event":"listening","host","port"} (or
{"event":"listening","socket"}), plus "egressPort" with --egress-socket, so a supervisor can
use --port 0 and read the port.

--control-secret-stdin: the first line of stdin is a secret every request must present as
`Authorization: Bearer <secret>` (401 otherwise); it is never in argv, the environment or a
child. The server exits when stdin ends: it never outlives its supervisor.
--egress-socket PATH: a TCP port on 127.0.0.1 relayed to the Unix socket PATH (egress.py), the
`egressProxy` runs are given.

Endpoints (see README.md for the full protocol):
  GET  /health   runtime status (200 when the fork server is up, 503 otherwise)
  POST /check    {"source"} -> {"ok", "violations":[{"line","col","message"}]}
  POST /invoke   one agent or action run; the response is chunked application/x-ndjson,
                 one event per line, flushed as it happens, always ending with "end".

Each invocation runs in a child forked by the zygote (zygote.py); this process only relays
events, enforces the wall-clock timeout (the child is SIGKILLed), and turns a killed or
crashed child into an error event. Nothing user code does can take this process down.

The child runs user code, so nothing it writes is taken on trust: events are rebuilt field by
field, it may name only user-code failures (CHILD_ERROR_CODES), `end` is built from what this
process observed, and the run's secrets are scrubbed from errors and logs (redact.py).
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import json
import os
import select
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

from . import bidi_relay, checker, runner, seccomp
from .egress import EgressForwarder
from .redact import Scrubber, run_secrets

RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

MAX_BODY_BYTES = 16 * 1024 * 1024
MAX_SOURCE_BYTES = 1024 * 1024
MAX_EVENT_LINE_BYTES = 16 * 1024 * 1024
MAX_OUTPUT_BYTES = 64 * 1024 * 1024
MAX_TIMEOUT_MS = 900_000
KILL_GRACE_S = 10.0

DEFAULTS = {
    "agent": {"timeoutMs": 300_000, "memoryMb": 1024},
    "action": {"timeoutMs": 30_000, "memoryMb": 128},
}
CHILD_EVENT_TYPES = {"text", "tool", "metrics", "messages", "result", "log", "error", "sandbox"}
# Events a run has at most one of; later ones from the child are dropped.
ONE_PER_RUN = frozenset({"metrics", "messages", "result", "error"})

# The error codes a child may report once user code runs in it: the failures of user code that
# runner.py names. Anything else it claims (RUNTIME_UNAVAILABLE, which is refunded upstream,
# TIMEOUT, MEMORY_LIMIT_EXCEEDED, OUTPUT_LIMIT_EXCEEDED, INTERNAL_ERROR, SOURCE_REJECTED...)
# becomes the kind's failure code: those outcomes are decided here, from what this process saw.
CHILD_ERROR_CODES = {
    "agent": frozenset({"AGENT_EXECUTION_FAILED", "AWS_CREDENTIALS_REQUIRED"}),
    "action": frozenset({"HANDLER_ERROR", "HANDLER_NOT_FOUND", "INVALID_HANDLER_RESULT"}),
}
# Before the child reports its sandbox, no user code has run in it: the runner's own reports of
# its setup are trusted.
SETUP_ERROR_CODES = frozenset({"SANDBOX_UNAVAILABLE", "INTERNAL_ERROR"})
SANDBOX_REPORT_KEYS = ("limits", "seccomp", "seccompDetail", "dumpable", "auditHook", "importHook")

MAX_SECRET_LINE_BYTES = 4096
MAX_DISCARDED_BODY_BYTES = 64 * 1024


class BadRequest(Exception):
    pass


# --------------------------------------------------------------------------------------
# request validation
# --------------------------------------------------------------------------------------

def parse_invoke(body: object) -> dict:
    """Validates an /invoke body. Unknown fields are ignored."""
    if not isinstance(body, dict):
        raise BadRequest("body must be a JSON object")
    kind = body.get("kind")
    if kind not in ("agent", "action"):
        raise BadRequest("kind must be 'agent' or 'action'")
    source = body.get("source")
    if not isinstance(source, str) or not source.strip():
        raise BadRequest("source must be a non-empty string")
    if len(source.encode("utf-8", "replace")) > MAX_SOURCE_BYTES:
        raise BadRequest(f"source must be at most {MAX_SOURCE_BYTES} bytes")
    req = {"kind": kind, "source": source}
    req["requestId"] = _opt_str(body, "requestId") or str(uuid.uuid4())
    req["functionName"] = _opt_str(body, "functionName") or ""
    req["timeoutMs"] = _opt_int(body, "timeoutMs", DEFAULTS[kind]["timeoutMs"], 1, MAX_TIMEOUT_MS)
    req["memoryMb"] = _opt_int(body, "memoryMb", DEFAULTS[kind]["memoryMb"], 16, 10240)
    env = body.get("env", {})
    if env is None:
        env = {}
    if not isinstance(env, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in env.items()):
        raise BadRequest("env must be an object of strings")
    req["env"] = env
    hosts = body.get("allowHosts", [])
    if hosts is None:
        hosts = []
    if not isinstance(hosts, list) or not all(isinstance(h, str) for h in hosts):
        raise BadRequest("allowHosts must be an array of strings")
    req["allowHosts"] = hosts
    calls = body.get("platformCalls")
    if calls is not None:
        if not isinstance(calls, dict):
            raise BadRequest("platformCalls must be an object")
        call_hosts = calls.get("hosts", [])
        call_headers = calls.get("headers", {})
        if not isinstance(call_hosts, list) or not all(isinstance(h, str) for h in call_hosts):
            raise BadRequest("platformCalls.hosts must be an array of strings")
        if not isinstance(call_headers, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in call_headers.items()):
            raise BadRequest("platformCalls.headers must be an object of strings")
        req["platformCalls"] = {"hosts": call_hosts, "headers": call_headers}
    proxy = body.get("egressProxy")
    if proxy is not None:
        req["egressProxy"] = _proxy_url(proxy)
    if kind == "agent":
        prompt = body.get("prompt")
        if not isinstance(prompt, str):
            raise BadRequest("prompt must be a string")
        req["prompt"] = prompt
        messages = body.get("messages", [])
        if messages is None:
            messages = []
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise BadRequest("messages must be an array of objects")
        req["messages"] = messages
    else:
        event = body.get("event", {})
        if event is None:
            event = {}
        if not isinstance(event, dict):
            raise BadRequest("event must be an object")
        req["event"] = event
    return req


def _proxy_url(value: object) -> str:
    """An http://[user:password@]host:port URL. The message never repeats the value: it holds
    the run's credential."""
    problem = BadRequest("egressProxy must be an http://[user:password@]host:port URL")
    if not isinstance(value, str) or any(c in value for c in "\r\n\0 "):
        raise problem
    try:
        parts = urlsplit(value)
        port = parts.port
    except ValueError:
        raise problem from None
    if parts.scheme != "http" or not parts.hostname or port is None or parts.path not in ("", "/") \
            or parts.query or parts.fragment:
        raise problem
    return value


def _opt_str(body: dict, key: str) -> str | None:
    value = body.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise BadRequest(f"{key} must be a string")
    return value


def _opt_int(body: dict, key: str, default: int, low: int, high: int) -> int:
    value = body.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise BadRequest(f"{key} must be an integer")
    if not low <= int(value) <= high:
        raise BadRequest(f"{key} must be between {low} and {high}")
    return int(value)


# --------------------------------------------------------------------------------------
# the zygote connection
# --------------------------------------------------------------------------------------

class Invocation:
    def __init__(self, inv_id: int) -> None:
        self.id = inv_id
        self.pid: int | None = None
        self.spawn_error: str | None = None
        self.exit_info: dict | None = None
        self.spawned = threading.Event()
        self.exited = threading.Event()


class ZygoteClient:
    def __init__(self, config: dict) -> None:
        self.config = config
        self.info: dict = {}
        self._lock = threading.Lock()  # guards _pending and _sock
        self._send_lock = threading.Lock()  # serialises writes to the control socket
        self._start_lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._proc: subprocess.Popen | None = None
        self._pending: dict[int, Invocation] = {}
        self._next_id = 1

    @property
    def alive(self) -> bool:
        return self._sock is not None and self._proc is not None and self._proc.poll() is None

    def ensure_running(self) -> None:
        with self._start_lock:
            if not self.alive:
                self._start()

    def _start(self) -> None:
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        env = {k: v for k, v in os.environ.items()
               if k in ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONHASHSEED",
                        "SYSTEMROOT", "LD_LIBRARY_PATH", "PYTHONUNBUFFERED")
               or k in self.config.get("passEnv", [])}
        paths = [RUNTIME_DIR] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        env["PYTHONPATH"] = os.pathsep.join(paths)
        cmd = [sys.executable, "-m", "platform_runtime.zygote", "--control-fd",
               str(child.fileno()), "--config", json.dumps(self.config)]
        # stdout goes to our stderr: our stdout carries the "listening" line only.
        proc = subprocess.Popen(cmd, pass_fds=[child.fileno()], env=env, cwd=RUNTIME_DIR,
                                stdin=subprocess.DEVNULL, stdout=sys.stderr.fileno())
        child.close()
        try:
            parent.settimeout(120)
            data = parent.recv(1 << 20)
            parent.settimeout(None)
            info = json.loads(data) if data else {}
        except (OSError, ValueError):
            info = {}
        if info.get("op") != "ready":
            parent.close()
            proc.kill()
            proc.wait()
            raise RuntimeError("the fork server did not start")
        self.info = info
        self._sock, self._proc = parent, proc
        threading.Thread(target=self._dispatch, args=(parent, proc), daemon=True,
                         name="zygote-dispatch").start()

    def _dispatch(self, sock: socket.socket, proc: subprocess.Popen) -> None:
        while True:
            try:
                data = sock.recv(1 << 16)
            except OSError:
                data = b""
            if not data:
                break
            try:
                message = json.loads(data)
            except ValueError:
                continue
            with self._lock:
                inv = self._pending.get(message.get("id"))
                if message.get("op") == "exit":
                    self._pending.pop(message.get("id"), None)
            if inv is None:
                continue
            op = message.get("op")
            if op == "spawned":
                inv.pid = message.get("pid")
                inv.spawned.set()
            elif op == "spawn_failed":
                inv.spawn_error = str(message.get("error"))
                inv.spawned.set()
                inv.exited.set()
            elif op == "exit":
                inv.exit_info = message
                inv.spawned.set()
                inv.exited.set()
        # The fork server is gone: fail whatever was running; the next call restarts it.
        with self._lock:
            if self._sock is sock:
                self._sock = None
            pending, self._pending = self._pending, {}
        for inv in pending.values():
            inv.exit_info = {"lost": True}
            inv.spawned.set()
            inv.exited.set()
        try:
            sock.close()
        except OSError:
            pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()

    def spawn(self, request_fd: int, event_fd: int) -> Invocation:
        self.ensure_running()
        with self._lock:
            inv = Invocation(self._next_id)
            self._next_id += 1
            self._pending[inv.id] = inv
            sock = self._sock
        try:
            if sock is None:
                raise OSError("fork server unavailable")
            with self._send_lock:
                socket.send_fds(sock, [json.dumps({"op": "spawn", "id": inv.id}).encode()],
                                [request_fd, event_fd])
        except OSError as exc:
            with self._lock:
                self._pending.pop(inv.id, None)
            inv.spawn_error = str(exc)
            inv.spawned.set()
            inv.exited.set()
            return inv
        if not inv.spawned.wait(30):
            inv.spawn_error = "fork server did not answer"
            inv.exited.set()
        return inv

    def kill(self, inv: Invocation) -> None:
        sock = self._sock
        if sock is None or inv.exited.is_set():
            return
        try:
            with self._send_lock:
                sock.send(json.dumps({"op": "kill", "id": inv.id}).encode())
        except OSError:
            pass

    def stop(self) -> None:
        with self._lock:
            sock, self._sock = self._sock, None
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()
        if self._proc is not None:
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


# --------------------------------------------------------------------------------------
# running one invocation
# --------------------------------------------------------------------------------------

def _signal_name(sig: int | None) -> str:
    if sig is None:
        return "?"
    try:
        return signal.Signals(sig).name
    except ValueError:
        return str(sig)


class InvocationRun:
    """Drives one invocation and yields the events for the HTTP response."""

    def __init__(self, runtime: "Runtime", req: dict, send, client: socket.socket | None = None) -> None:
        self.runtime = runtime
        self.req = req
        self.send = send  # callable(event dict); raises OSError when the client is gone
        # Watched while the run is silent: a caller that hangs up stops the run at once, not at
        # its next event or its timeout (the platform aborts runs when a chat client goes away).
        self.client = client
        self.failure_code = "AGENT_EXECUTION_FAILED" if req["kind"] == "agent" else "HANDLER_ERROR"
        self.scrub = Scrubber(run_secrets(req))
        self.seen: set[str] = set()  # ONE_PER_RUN types already taken from the child
        # The child's error, held until the child is gone: what this process observed (a
        # timeout, a signal, the exit status) decides first.
        self.child_error: dict | None = None
        self.sandbox_report: dict | None = None  # set when the child reports it: user code runs
        self.client_gone = False

    def _send(self, event: dict) -> None:
        if self.client_gone:
            return
        try:
            self.send(event)
        except OSError:
            self.client_gone = True

    def run(self) -> None:
        req = self.req
        started = time.monotonic()
        if self.runtime.static_check:
            violations = checker.check_source(req["source"])
            if violations:
                self._send({"type": "error", "code": "SOURCE_REJECTED",
                            "message": "the source breaks the runtime restrictions: "
                                       + "; ".join(f"line {v.line}: {v.message}" for v in violations[:10]),
                            "violations": checker.result_json(violations)["violations"]})
                self._send(_empty_end(started))
                return
        req_r, req_w = os.pipe()
        ev_r, ev_w = os.pipe()
        try:
            inv = self.runtime.zygote.spawn(req_r, ev_w)
        except Exception as exc:  # the fork server could not be started
            inv = Invocation(0)
            inv.spawn_error = str(exc)
        finally:
            os.close(req_r)
            os.close(ev_w)
        try:
            if inv.spawn_error:
                os.close(req_w)
                self._send({"type": "error", "code": "RUNTIME_UNAVAILABLE",
                            "message": "the runtime could not start the invocation"})
                self._send(_empty_end(started))
                return
            self._send({"type": "start", "requestId": req["requestId"], "pid": inv.pid})
            payload = dict(req)
            payload["deadline"] = started + req["timeoutMs"] / 1000.0
            threading.Thread(target=_write_all, args=(req_w, json.dumps(payload).encode("utf-8")),
                             daemon=True, name="request-writer").start()
            self._relay(inv, ev_r, started)
        finally:
            os.close(ev_r)

    def _relay(self, inv: Invocation, ev_r: int, started: float) -> None:
        req = self.req
        deadline = started + req["timeoutMs"] / 1000.0
        buf = bytearray()
        scanned = 0  # bytes of buf already known to hold no newline
        total = 0
        timed_out = over_limit = False
        poller = select.poll()  # not select(): descriptors may exceed FD_SETSIZE
        poller.register(ev_r, select.POLLIN)
        client_fd = self.client.fileno() if self.client is not None else -1
        if client_fd >= 0:
            poller.register(client_fd, select.POLLIN | select.POLLHUP | select.POLLERR | getattr(select, "POLLRDHUP", 0))
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready = poller.poll(min(remaining, 1.0) * 1000)
            if client_fd >= 0 and any(fd == client_fd for fd, _ in ready):
                if self._client_hung_up():
                    self.client_gone = True
                else:  # unexpected data from the caller: stop watching rather than spin on it
                    poller.unregister(client_fd)
                    client_fd = -1
            if self.client_gone:
                break
            if not any(fd == ev_r for fd, _ in ready):
                continue
            chunk = os.read(ev_r, 1 << 16)
            if not chunk:
                break
            total += len(chunk)
            buf += chunk
            while True:
                newline = buf.find(b"\n", scanned)
                if newline < 0:
                    scanned = len(buf)
                    break
                line = bytes(buf[:newline])
                del buf[:newline + 1]
                scanned = 0
                self._child_line(line)
            if total > MAX_OUTPUT_BYTES or len(buf) > MAX_EVENT_LINE_BYTES:
                over_limit = True
                break
        if timed_out or over_limit or self.client_gone:
            self.runtime.zygote.kill(inv)
        elif not inv.exited.wait(max(0.0, deadline - time.monotonic())):
            timed_out = True  # closed its event pipe but kept running
            self.runtime.zygote.kill(inv)
        if not inv.exited.wait(KILL_GRACE_S):
            self.runtime.zygote.kill(inv)
            inv.exited.wait(KILL_GRACE_S)
        info = inv.exit_info or {}
        error = self._final_error(info, timed_out, over_limit)
        if error is not None:
            self._send(error)
        self._send({"type": "end", "durationMs": _ms_since(started),
                    "maxRssKb": info.get("maxRssKb", 0), "exitCode": info.get("exitCode"),
                    "signal": _signal_name(info["signal"]) if info.get("signal") else None,
                    "sandbox": self.sandbox_report})

    def _client_hung_up(self) -> bool:
        """True when the caller closed its end. The request body was read in full before the run,
        so anything readable now is either end-of-stream or a pipelined request (left unread)."""
        try:
            return self.client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return False
        except OSError:
            return True

    def _child_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            event = json.loads(line)
        except ValueError:
            return
        if not isinstance(event, dict) or event.get("type") not in CHILD_EVENT_TYPES:
            return
        kind = event["type"]
        if kind == "sandbox":
            if self.sandbox_report is None:
                self.sandbox_report = {k: event[k] for k in SANDBOX_REPORT_KEYS if k in event}
            return
        clean = _CHILD_EVENTS[kind](event)
        if clean is None or (kind == "result" and self.req["kind"] != "action"):
            return
        if kind in ONE_PER_RUN:
            if kind in self.seen:
                return
            self.seen.add(kind)
        if kind == "error":
            self.child_error = self._admitted_error(clean)
            return
        if kind == "log":
            clean["data"] = self.scrub(clean["data"])
        self._send(clean)

    def _admitted_error(self, event: dict) -> dict:
        """The child's error with a code it may report, and no secret in its text."""
        allowed = (CHILD_ERROR_CODES[self.req["kind"]] if self.sandbox_report is not None
                   else SETUP_ERROR_CODES)
        event["code"] = event["code"] if event["code"] in allowed else self.failure_code
        event["message"] = self.scrub(event["message"])
        if "errorType" in event:
            event["errorType"] = self.scrub(event["errorType"])
        return event

    def _final_error(self, info: dict, timed_out: bool, over_limit: bool) -> dict | None:
        """The run's one error: what this process observed first, then the child's own report."""
        req = self.req
        if timed_out:
            return {"type": "error", "code": "TIMEOUT",
                    "message": f"the invocation exceeded its timeout of {req['timeoutMs']} ms"}
        if over_limit:
            return {"type": "error", "code": "OUTPUT_LIMIT_EXCEEDED",
                    "message": "the invocation produced too much output"}
        sig = info.get("signal")
        if sig == signal.SIGXCPU:
            return {"type": "error", "code": "TIMEOUT",
                    "message": "the invocation exceeded its CPU time limit"}
        if sig is not None:
            rss_mb = (info.get("maxRssKb") or 0) / 1024.0
            if rss_mb >= 0.9 * req["memoryMb"] and sig in (signal.SIGKILL, signal.SIGSEGV,
                                                          signal.SIGABRT, signal.SIGBUS):
                return _memory_error()
            return {"type": "error", "code": self.failure_code,
                    "message": f"the user code process was terminated by {_signal_name(sig)}"}
        code = info.get("exitCode")
        if code == runner.EXIT_MEMORY:
            return _memory_error()
        if self.child_error is not None:
            return self.child_error
        if info.get("lost"):
            return {"type": "error", "code": "RUNTIME_UNAVAILABLE",
                    "message": "the runtime process was lost during the invocation"}
        if code not in (0, None):
            return {"type": "error", "code": self.failure_code,
                    "message": f"the user code process exited with status {code}"}
        if req["kind"] == "action" and "result" not in self.seen:
            return {"type": "error", "code": "INVALID_HANDLER_RESULT",
                    "message": "the handler returned no result"}
        return None


def _memory_error() -> dict:
    return {"type": "error", "code": "MEMORY_LIMIT_EXCEEDED",
            "message": "the invocation exceeded its memory limit"}


# --------------------------------------------------------------------------------------
# events from the child, rebuilt with the protocol's fields only
# --------------------------------------------------------------------------------------

def _int(value, default: int | None = 0) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _text_event(e: dict) -> dict | None:
    return {"type": "text", "data": e["data"]} if isinstance(e.get("data"), str) else None


def _tool_event(e: dict) -> dict | None:
    if not isinstance(e.get("name"), str):
        return None
    tool_id = e.get("toolUseId")
    return {"type": "tool", "name": e["name"], "toolUseId": tool_id if isinstance(tool_id, str) else None}


def _metrics_event(e: dict) -> dict:
    tools = e.get("toolsUsed")
    return {"type": "metrics", "totalCycles": _int(e.get("totalCycles")),
            "totalTokens": _int(e.get("totalTokens")), "inputTokens": _int(e.get("inputTokens")),
            "outputTokens": _int(e.get("outputTokens")),
            "toolsUsed": [t for t in tools if isinstance(t, str)] if isinstance(tools, list) else [],
            "durationMs": _int(e.get("durationMs"))}


def _messages_event(e: dict) -> dict | None:
    return {"type": "messages", "messages": e["messages"]} if isinstance(e.get("messages"), list) else None


def _result_event(e: dict) -> dict | None:
    status = _int(e.get("statusCode"), None)
    if status is None:
        return None
    out = {"type": "result", "statusCode": status, "body": e.get("body")}
    if isinstance(e.get("headers"), dict):
        out["headers"] = e["headers"]
    return out


def _log_event(e: dict) -> dict | None:
    if not isinstance(e.get("data"), str):
        return None
    return {"type": "log", "stream": e.get("stream") if e.get("stream") in ("stdout", "stderr") else "stdout",
            "data": e["data"]}


def _error_event(e: dict) -> dict | None:
    if not isinstance(e.get("code"), str):
        return None
    out = {"type": "error", "code": e["code"], "message": str(e.get("message") or "")}
    if isinstance(e.get("errorType"), str):
        out["errorType"] = e["errorType"]
    if _int(e.get("line"), None) is not None:
        out["line"] = e["line"]
    return out


_CHILD_EVENTS = {"text": _text_event, "tool": _tool_event, "metrics": _metrics_event,
                 "messages": _messages_event, "result": _result_event, "log": _log_event,
                 "error": _error_event}


def _empty_end(started: float) -> dict:
    """`end` for a run that never got a child process."""
    return {"type": "end", "durationMs": _ms_since(started), "maxRssKb": 0, "exitCode": None,
            "signal": None, "sandbox": None}


def _write_all(fd: int, data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
    except OSError:
        pass  # the child died before reading; the relay reports it
    finally:
        os.close(fd)


def _ms_since(started: float) -> int:
    return int((time.monotonic() - started) * 1000)


# --------------------------------------------------------------------------------------
# HTTP
# --------------------------------------------------------------------------------------

def bearer_digest(value: bytes) -> bytes:
    """Digests are compared, not the values: equal length whatever was presented."""
    return hashlib.sha256(value).digest()


def read_control_secret(fd: int) -> bytes:
    """The first line of `fd` (the supervisor's pipe), as the digest of the Authorization value
    that must carry it; the secret itself is not kept. Read with os.read, not sys.stdin: a
    thread blocked in a buffered read holds a lock that interpreter shutdown then waits for."""
    line = bytearray()
    try:
        while b"\n" not in line and len(line) <= MAX_SECRET_LINE_BYTES:
            chunk = os.read(fd, MAX_SECRET_LINE_BYTES + 1 - len(line))
            if not chunk:
                break
            line += chunk
        end = line.find(b"\n")
        if end < 0 or end > MAX_SECRET_LINE_BYTES:
            raise SystemExit("runtime: --control-secret-stdin needs a secret line on stdin "
                             f"(at most {MAX_SECRET_LINE_BYTES} bytes)")
        secret = bytes(line[:end]).rstrip(b"\r")
        if not secret:
            raise SystemExit("runtime: the control secret on stdin is empty")
        return bearer_digest(b"Bearer " + secret)
    finally:
        line[:] = b"\0" * len(line)


def exit_when_stdin_ends(fd: int) -> None:
    """A supervisor that stops or dies closes our stdin: stop too (as if sent SIGTERM)."""
    def watch() -> None:
        try:
            while os.read(fd, 65536):
                pass  # nothing more is expected after the secret; whatever comes is dropped
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGTERM)

    threading.Thread(target=watch, daemon=True, name="stdin-watch").start()


class Runtime:
    def __init__(self, args: argparse.Namespace, control_digest: bytes | None = None) -> None:
        self.control_digest = control_digest
        self.static_check = not args.no_static_check
        self.quiet = args.quiet
        self.slots = threading.BoundedSemaphore(args.max_concurrency)
        self.max_concurrency = args.max_concurrency
        self.active = 0
        self.active_lock = threading.Lock()
        self.zygote = ZygoteClient({
            "extraReadRoots": [os.path.abspath(p) for p in args.allow_read],
            "requireSeccomp": args.require_seccomp,
            "preload": args.preload,
            "passEnv": args.pass_env,
        })


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "platform-runtime/1"
    runtime: Runtime  # set on the subclass built in make_server

    def log_message(self, fmt, *args) -> None:
        if not self.runtime.quiet:
            sys.stderr.write("runtime: " + (fmt % args) + "\n")

    def address_string(self) -> str:
        addr = self.client_address
        return addr[0] if isinstance(addr, tuple) and addr else "unix"

    # helpers ---------------------------------------------------------------------------
    def _send_json(self, status: int, obj: dict, headers: dict | None = None) -> None:
        data = json.dumps(obj).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        expected = self.runtime.control_digest
        if expected is None:
            return True
        presented = (self.headers.get("Authorization") or "").encode("latin-1", "replace")
        if hmac.compare_digest(bearer_digest(presented), expected):
            return True
        self._discard_body()
        self._send_json(401, {"error": {"code": "UNAUTHORIZED",
                                        "message": "a valid Authorization bearer credential is required"}},
                        {"WWW-Authenticate": "Bearer"})
        return False

    def _error(self, status: int, code: str, message: str) -> None:
        self._send_json(status, {"error": {"code": code, "message": message}})

    def _discard_body(self) -> None:
        """Reads a small unwanted body, so the client sees our answer rather than a reset while
        it is still sending; a large one is not read and the connection is closed instead."""
        try:
            size = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            size = -1
        if 0 <= size <= MAX_DISCARDED_BODY_BYTES and "Transfer-Encoding" not in self.headers:
            self.rfile.read(size)
        else:
            self.close_connection = True

    def _read_json(self):
        length = self.headers.get("Content-Length")
        if length is None:
            self.close_connection = True
            self._error(411, "INVALID_PARAMETERS", "Content-Length is required")
            return None
        try:
            size = int(length)
        except ValueError:
            size = -1
        if size < 0 or size > MAX_BODY_BYTES:
            self.close_connection = True  # the body is not read
            self._error(413, "INVALID_PARAMETERS", f"body must be at most {MAX_BODY_BYTES} bytes")
            return None
        raw = self.rfile.read(size)
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            self._error(400, "INVALID_PARAMETERS", "body must be valid JSON")
            return None

    # routes ----------------------------------------------------------------------------
    def do_GET(self) -> None:
        if not self._authorized():
            return
        if self.path.split("?")[0] != "/health":
            self._error(404, "NOT_FOUND", "no such endpoint")
            return
        rt = self.runtime
        alive = rt.zygote.alive
        info = rt.zygote.info
        self._send_json(200 if alive else 503, {
            "status": "ok" if alive else "unavailable",
            "python": info.get("python"),
            "zygote": {"pid": info.get("pid"), "alive": alive, "threads": info.get("threads"),
                       "dumpable": info.get("dumpable")},
            "dumpable": seccomp.get_dumpable(),
            "preloaded": info.get("preloaded", []),
            "missing": info.get("missing", {}),
            "seccompSupported": info.get("seccompSupported"),
            "staticCheck": rt.static_check,
            "active": rt.active,
            "maxConcurrency": rt.max_concurrency,
        })

    def do_POST(self) -> None:
        if not self._authorized():
            return
        route = self.path.split("?")[0]
        if route not in ("/invoke", "/check", "/bidi"):
            self._error(404, "NOT_FOUND", "no such endpoint")
            return
        body = self._read_json()
        if body is None:
            return
        if route == "/bidi":
            # A voice session handed over by the bridge (bidi_relay.py): the answer waits for its end.
            if not isinstance(body, dict) or not isinstance(body.get("session"), dict) or not isinstance(body.get("connect"), dict):
                self._error(400, "INVALID_PARAMETERS", "session and connect must be objects")
                return
            try:
                result = bidi_relay.relay(body["session"], body["connect"])
            except (OSError, ValueError) as exc:
                self._error(502, "RUNTIME_UNAVAILABLE", f"the voice bridge could not be reached: {exc}")
                return
            self._send_json(200, result)
            return
        if route == "/check":
            source = body.get("source") if isinstance(body, dict) else None
            if not isinstance(source, str):
                self._error(400, "INVALID_PARAMETERS", "source must be a string")
                return
            self._send_json(200, checker.result_json(checker.check_source(source)))
            return
        try:
            req = parse_invoke(body)
        except BadRequest as exc:
            self._error(400, "INVALID_PARAMETERS", str(exc))
            return
        rt = self.runtime
        if not rt.slots.acquire(blocking=False):
            self._error(429, "TOO_MANY_INVOCATIONS",
                        f"at most {rt.max_concurrency} invocations run at once")
            return
        with rt.active_lock:
            rt.active += 1
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/x-ndjson")
            self.send_header("Transfer-Encoding", "chunked")
            self.send_header("Cache-Control", "no-store")
            self.send_header("X-Accel-Buffering", "no")
            self.send_header("X-Request-Id", req["requestId"])
            self.end_headers()
            run = InvocationRun(rt, req, self._send_event, self.connection)
            try:
                run.run()
            except Exception as exc:  # a bug here must still end the stream properly
                sys.stderr.write(run.scrub(f"runtime: invocation {req['requestId']} failed: {exc!r}") + "\n")
                run._send({"type": "error", "code": "INTERNAL_ERROR",
                           "message": "the runtime failed while running the invocation"})
                run._send(_empty_end(time.monotonic()))
            if not run.client_gone:
                self.wfile.write(b"0\r\n\r\n")
            else:
                self.close_connection = True
        finally:
            with rt.active_lock:
                rt.active -= 1
            rt.slots.release()

    def _send_event(self, event: dict) -> None:
        data = (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))


# The listen backlog. socketserver's default of 5 is too small: a Unix socket refuses a connect
# outright (EAGAIN) once the backlog is full, where TCP would retry, so a burst of first calls to a
# cold tenant failed while the server was still accepting.
_BACKLOG = 256


class _TCPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = _BACKLOG


class _UnixServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    request_queue_size = _BACKLOG


def make_server(args: argparse.Namespace, runtime: Runtime):
    """The HTTP server and its `listening` announcement (without egressPort)."""
    if args.socket:
        handler = type("UnixHandler", (Handler,), {"runtime": runtime,
                                                   "disable_nagle_algorithm": False})
        if os.path.exists(args.socket):
            os.unlink(args.socket)
        server = _UnixServer(args.socket, handler)
        announce = {"event": "listening", "socket": args.socket}
    else:
        handler = type("TCPHandler", (Handler,), {"runtime": runtime,
                                                  "disable_nagle_algorithm": True})
        server = _TCPServer((args.host, args.port), handler)
        announce = {"event": "listening", "host": args.host, "port": server.server_address[1]}
    return server, announce


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="platform_runtime.server", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8080, help="TCP port (0: pick a free one)")
    p.add_argument("--socket", help="listen on this Unix socket path instead of TCP")
    p.add_argument("--control-secret-stdin", action="store_true",
                   help="read a secret from the first line of stdin; every request must carry "
                        "'Authorization: Bearer <secret>'; exit when stdin ends")
    p.add_argument("--egress-socket", metavar="PATH",
                   help="relay connections to a TCP port on 127.0.0.1 to this Unix socket "
                        "(announced as egressPort)")
    p.add_argument("--allow-read", action="append", default=[], metavar="PATH",
                   help="extra directory user code may read (repeatable)")
    p.add_argument("--preload", action="append", default=[], metavar="MODULE",
                   help="extra module to import in the fork server (repeatable)")
    p.add_argument("--pass-env", action="append", default=[], metavar="NAME",
                   help="environment variable passed to the fork server (repeatable)")
    p.add_argument("--max-concurrency", type=int, default=32)
    p.add_argument("--require-seccomp", action="store_true",
                   help="refuse to run user code when the seccomp filter cannot be installed")
    p.add_argument("--no-static-check", action="store_true",
                   help="TESTING ONLY: skip the static check so the runtime sandbox can be "
                        "exercised on its own")
    p.add_argument("--quiet", action="store_true", help="no access log")
    return p


class _Stopped(BaseException):
    """SIGTERM: the supervisor stops this server. Raised by the signal handler wherever the main
    thread is, so not an Exception: socketserver catches every Exception a request's dispatch
    raises (`_handle_request_noblock`), and a stop landing there was printed and swallowed, leaving
    a server that ignored the next SIGTERM and outlived its supervisor (seen in CI under load)."""


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Not dumpable: a run that escaped its sandbox (same user) cannot read our memory, our
    # environment or the control secret through /proc/<pid>/mem or environ.
    seccomp.set_dumpable(False)
    digest = read_control_secret(sys.stdin.fileno()) if args.control_secret_stdin else None
    runtime = Runtime(args, digest)
    runtime.zygote.ensure_running()
    server, announce = make_server(args, runtime)
    forwarder = EgressForwarder(args.egress_socket) if args.egress_socket else None
    if forwarder is not None:
        forwarder.start()
        announce["egressPort"] = forwarder.port

    def stop(signum, frame):
        # Once: a second SIGTERM (the stdin watch when the supervisor closes our stdin, or the
        # supervisor's own) must not interrupt the clean-up below with a traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Stopped

    try:
        signal.signal(signal.SIGTERM, stop)
        if args.control_secret_stdin:
            exit_when_stdin_ends(sys.stdin.fileno())
        sys.stdout.write(json.dumps(announce) + "\n")
        sys.stdout.flush()
        server.serve_forever(poll_interval=0.5)
    except (_Stopped, KeyboardInterrupt):
        # A stop is the normal end of a server (idle, evicted, the platform closing): no traceback.
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    finally:
        server.server_close()
        if forwarder is not None:
            forwarder.close()
        runtime.zygote.stop()
        if args.socket and os.path.exists(args.socket):
            os.unlink(args.socket)
    return 0


if __name__ == "__main__":
    sys.exit(main())
