"""The fork server: a single-threaded process that preloads the allowed libraries once, prepares
what every run's sandbox needs that is the same for all runs (`sandbox.prepare`), and forks one
child per invocation.

Why a separate process: the HTTP server is multi-threaded, and forking a multi-threaded
process can deadlock the child on a lock another thread held at the moment of the fork
(Python 3.12 warns about exactly this). The zygote never starts threads, so every child
starts from a consistent, warm interpreter; per-invocation overhead is a fork, not an
interpreter start and a boto3 import.

Control protocol with server.py, over a SOCK_SEQPACKET socket pair (one JSON object per
message):
  server -> zygote  {"op":"spawn","id":N} + SCM_RIGHTS [request pipe read end, event pipe write end]
                    {"op":"kill","id":N}
  zygote -> server  {"op":"ready","pid","python","preloaded","missing","threads","readRoots",
                     "seccompSupported","dumpable"}
                    {"op":"spawned","id","pid"} | {"op":"spawn_failed","id","error"}
                    {"op":"exit","id","pid","exitCode","signal","maxRssKb","cpuMs"}
The zygote reaps its children and reports each exit with the child's peak RSS. When the
control socket closes (the server went away) it kills its children and exits.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import selectors
import signal
import socket
import sys
import threading

from . import platform_calls, runner, sandbox, seccomp

# Imported before the first fork so children start warm. The first group is required by
# the runtime itself; the rest is what user code may import. Optional packages that are
# not installed are reported in /health and simply fail the run that imports them.
RUNTIME_MODULES = ("asyncio", "inspect", "json", "resource", "selectors", "ipaddress",
                   "platform_runtime.checker", "platform_runtime.runner")
USER_MODULES = ("json", "datetime", "time", "uuid", "typing", "dataclasses", "collections",
                "collections.abc", "itertools", "functools", "re", "math", "random", "base64",
                "hashlib", "urllib.parse", "logging")
# The last group is what those libraries import lazily, on first use, on the paths agents take:
# httpx imports httpcore at its first client, httpcore imports trio when it is installed, and
# trio loads ctypes, which the sandbox refuses (docs/ARCHITECTURE.md, "What is imported before
# the sandbox"). Imported here, they hold their ctypes before the audit hook exists.
OPTIONAL_MODULES = ("boto3", "botocore", "botocore.session", "strands", "strands.models",
                    "strands_tools", "mcp.client.streamable_http",
                    "httpcore", "anyio._backends._asyncio", "strands.tools.mcp", "mcp.client.sse")


def preload(extra: list[str]) -> tuple[list[str], dict[str, str]]:
    loaded: list[str] = []
    missing: dict[str, str] = {}
    for name in RUNTIME_MODULES + USER_MODULES + OPTIONAL_MODULES + tuple(extra):
        try:
            importlib.import_module(name)
            loaded.append(name)
        except Exception as exc:  # ImportError and anything a broken package raises
            missing[name] = f"{type(exc).__name__}: {exc}"
    try:
        import boto3  # noqa: F401  (warm the default session's data loader)

        boto3.session.Session()
    except Exception:
        pass
    return loaded, missing


class Zygote:
    def __init__(self, sock: socket.socket, config: dict) -> None:
        self.sock = sock
        self.config = config
        self.children: dict[int, int] = {}  # pid -> invocation id
        self.by_id: dict[int, int] = {}
        self.pid = os.getpid()

    def send(self, message: dict) -> None:
        self.sock.send(json.dumps(message).encode("utf-8"))

    def serve(self) -> None:
        wake_r, wake_w = os.pipe()
        os.set_blocking(wake_r, False)
        os.set_blocking(wake_w, False)
        signal.set_wakeup_fd(wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        sel = selectors.DefaultSelector()
        sel.register(self.sock, selectors.EVENT_READ, "control")
        sel.register(wake_r, selectors.EVENT_READ, "wake")
        try:
            while True:
                for key, _mask in sel.select(timeout=1.0):
                    if key.data == "wake":
                        try:
                            while os.read(wake_r, 512):
                                pass
                        except BlockingIOError:
                            pass
                    elif not self._control():
                        return
                self._reap()
        finally:
            self._shutdown()

    def _control(self) -> bool:
        try:
            data, fds, _flags, _addr = socket.recv_fds(self.sock, 65536, 4)
        except InterruptedError:
            return True
        except OSError:
            return False
        if not data:
            for fd in fds:
                os.close(fd)
            return False
        try:
            message = json.loads(data)
        except ValueError:
            message = {}
        op = message.get("op")
        if op == "spawn" and len(fds) == 2:
            self._spawn(int(message["id"]), fds[0], fds[1])
        elif op == "kill":
            pid = self.by_id.get(int(message.get("id", -1)))
            if pid is not None and pid in self.children:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            for fd in fds:
                os.close(fd)
        else:
            for fd in fds:
                os.close(fd)
        return True

    def _spawn(self, inv_id: int, request_fd: int, event_fd: int) -> None:
        try:
            pid = os.fork()
        except OSError as exc:
            os.close(request_fd)
            os.close(event_fd)
            self.send({"op": "spawn_failed", "id": inv_id, "error": str(exc)})
            return
        if pid == 0:  # the child: never returns into this loop
            code = runner.EXIT_INTERNAL
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                signal.signal(signal.SIGTERM, signal.SIG_DFL)
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                seccomp.set_parent_death_signal(signal.SIGKILL)
                if os.getppid() != self.pid:
                    os._exit(code)
                code = runner.child_main(request_fd, event_fd, self.config)
            except BaseException:
                code = runner.EXIT_INTERNAL
            finally:
                os._exit(code)
        os.close(request_fd)
        os.close(event_fd)
        self.children[pid] = inv_id
        self.by_id[inv_id] = pid
        self.send({"op": "spawned", "id": inv_id, "pid": pid})

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            inv_id = self.children.pop(pid, None)
            self.by_id.pop(inv_id, None)
            info = {"op": "exit", "id": inv_id, "pid": pid, "maxRssKb": usage.ru_maxrss,
                    "cpuMs": int((usage.ru_utime + usage.ru_stime) * 1000),
                    "exitCode": None, "signal": None}
            if os.WIFSIGNALED(status):
                info["signal"] = os.WTERMSIG(status)
            else:
                info["exitCode"] = os.waitstatus_to_exitcode(status)
            try:
                self.send(info)
            except OSError:
                pass

    def _shutdown(self) -> None:
        for pid in list(self.children):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for pid in list(self.children):
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="platform_runtime.zygote")
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--config", default="{}")
    args = parser.parse_args(argv)
    # The server owns Ctrl-C; the zygote exits when the control socket closes.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Not dumpable (execve made it dumpable again): no same-user process reads its memory, and
    # the children forked from it inherit this.
    seccomp.set_dumpable(False)
    config = json.loads(args.config)
    sock = socket.socket(fileno=args.control_fd)
    loaded, missing = preload(list(config.get("preload") or []))
    config["readRoots"] = sandbox.default_read_roots(list(config.get("extraReadRoots") or []))
    # Last before the first fork: what every run's sandbox needs that is the same for all runs.
    try:
        platform_calls.prepare()
        sandbox.prepare(config["readRoots"])
    except Exception:
        pass  # each run then installs everything itself, and reports what fails
    zygote = Zygote(sock, config)
    zygote.send({
        "op": "ready", "pid": os.getpid(), "python": sys.version.split()[0],
        "preloaded": loaded, "missing": missing, "threads": threading.active_count(),
        "readRoots": config["readRoots"], "seccompSupported": seccomp.supported(),
        "dumpable": seccomp.get_dumpable(),
    })
    zygote.serve()
    return 0


if __name__ == "__main__":
    sys.exit(main())
