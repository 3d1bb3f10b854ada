"""The control channel: --socket with --control-secret-stdin, as the platform starts a tenant's
runtime inside its OS sandbox. Every request needs the secret; the secret stays out of argv, the
environment, the fork server and the children; the server ends with its stdin; and no runtime
process is dumpable (same-user processes cannot read its memory or environment)."""

from __future__ import annotations

import os
import secrets
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import unittest

from .support import RUNTIME_DIR, RuntimeServer, error_of, fixture, of_type

SLEEPING = fixture("sleeping_agent.py")


def process_texts(pid: int) -> bytes:
    """argv and environment of a process (empty when they cannot be read)."""
    out = b""
    for name in ("cmdline", "environ"):
        try:
            with open(f"/proc/{pid}/{name}", "rb") as fh:
                out += fh.read()
        except OSError:
            pass
    return out


def writable_memory(pid: int):
    """The writable mappings of a process (heap, stacks, anonymous memory), or None when this
    test may not read them (not root: the process is not dumpable)."""
    try:
        with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
            for line in maps:
                fields = line.split()
                start, end = (int(x, 16) for x in fields[0].split("-"))
                if "rw" not in fields[1] or end - start > 1 << 30:
                    continue
                try:
                    mem.seek(start)
                    yield mem.read(end - start)
                except OSError:
                    continue
    except PermissionError:
        return None


class ControlSecretTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tempfile.mkdtemp(prefix="control-")
        cls.secret = secrets.token_urlsafe(32)
        cls.server = RuntimeServer("--socket", os.path.join(cls.dir, "control.sock"), secret=cls.secret)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_requests_without_the_secret_are_refused(self) -> None:
        cases = {
            "none": None,
            "wrong": f"Bearer {secrets.token_urlsafe(32)}",
            "no scheme": self.secret,
            "longer": f"Bearer {self.secret}x",
            "prefix": f"Bearer {self.secret[:-1]}",
        }
        for what, value in cases.items():
            for method, path, body in (("GET", "/health", None), ("POST", "/check", {"source": "x = 1"}),
                                       ("POST", "/invoke", {"kind": "action", "source": "x = 1"})):
                with self.subTest(what=what, path=path):
                    status, payload, resp = self.server.request_json(
                        method, path, body, authorize=False,
                        headers={} if value is None else {"Authorization": value})
                    self.assertEqual(status, 401)
                    self.assertEqual(payload["error"]["code"], "UNAUTHORIZED")
                    self.assertEqual(resp.getheader("WWW-Authenticate"), "Bearer")

    def test_the_secret_opens_every_endpoint(self) -> None:
        status, health, _ = self.server.request_json("GET", "/health")
        self.assertEqual((status, health["status"]), (200, "ok"))
        status, checked, _ = self.server.request_json("POST", "/check", {"source": "import os\n"})
        self.assertEqual((status, checked["ok"]), (200, False))
        events = self.server.action('def handler(event, context):\n    return {"statusCode": 200, "body": 1}\n')
        self.assertEqual(of_type(events, "result")[0]["body"], 1)

    def test_no_runtime_process_is_dumpable(self) -> None:
        _s, health, _ = self.server.request_json("GET", "/health")
        self.assertIs(health["dumpable"], False)
        self.assertIs(health["zygote"]["dumpable"], False)
        events = self.server.action('def handler(event, context):\n    return {"statusCode": 200, "body": 1}\n')
        self.assertIs(events[-1]["sandbox"]["dumpable"], False)
        if os.geteuid() != 0:  # root reads any process; anyone else must not read these
            with self.assertRaises(PermissionError):
                open(f"/proc/{self.server.proc.pid}/environ", "rb").close()

    def test_the_secret_reaches_no_other_process(self) -> None:
        needle = self.secret.encode()
        self.assertNotIn(needle, process_texts(self.server.proc.pid))
        _s, health, _ = self.server.request_json("GET", "/health")
        zygote = health["zygote"]["pid"]
        stream = self.server.stream({"kind": "agent", "source": SLEEPING, "prompt": "30",
                                     "timeoutMs": 60_000})
        try:
            child = None
            for _at, event in stream:
                if event["type"] == "start":
                    child = event["pid"]
                if event["type"] == "text":
                    break  # the child is running user code now
            self.assertIsNotNone(child)
            for pid in (zygote, child):
                with self.subTest(pid=pid):
                    self.assertNotIn(needle, process_texts(pid))
                    regions = writable_memory(pid)
                    if regions is None:
                        continue
                    self.assertFalse(any(needle in region for region in regions))
        finally:
            stream.close()


class SupervisorLifetimeTest(unittest.TestCase):
    def test_the_server_exits_when_its_stdin_ends(self) -> None:
        workdir = tempfile.mkdtemp(prefix="control-")
        socket_path = os.path.join(workdir, "control.sock")
        server = RuntimeServer("--socket", socket_path, secret=secrets.token_urlsafe(16))
        try:
            _s, health, _ = server.request_json("GET", "/health")
            zygote_pid = health["zygote"]["pid"]
            zygote = os.pidfd_open(zygote_pid) if hasattr(os, "pidfd_open") else None
            server.proc.stdin.close()  # the supervisor went away
            self.assertEqual(server.proc.wait(timeout=20), 0)
            self.assertFalse(os.path.exists(socket_path))
            if zygote is not None:  # and its fork server with it (readable once it exited)
                ready, _, _ = select.select([zygote], [], [], 15)
                os.close(zygote)
                self.assertTrue(ready)
        finally:
            server.stop()
            shutil.rmtree(workdir, ignore_errors=True)

    def test_a_stop_during_a_request_dispatch_ends_the_server(self) -> None:
        # The SIGTERM handler raises wherever the main thread is; inside socketserver's dispatch of
        # a request (starting its thread), an Exception would be caught and printed, not stop it.
        import socketserver
        from platform_runtime import server as runtime_server

        class Stopping(socketserver.TCPServer):
            def process_request(self, request, client_address):
                raise runtime_server._Stopped()

        with Stopping(("127.0.0.1", 0), socketserver.BaseRequestHandler) as stopping:
            client = socket.create_connection(stopping.server_address)
            # Were the stop swallowed, the loop would go on: this ends it, and the assertion fails.
            guard = threading.Timer(10, stopping.shutdown)
            guard.start()
            try:
                with self.assertRaises(runtime_server._Stopped):
                    stopping.serve_forever(poll_interval=0.05)
            finally:
                guard.cancel()
                client.close()

    def test_no_secret_line_no_server(self) -> None:
        env = dict(os.environ, PYTHONPATH=RUNTIME_DIR)
        for stdin in (b"", b"\n", b"no newline"):
            with self.subTest(stdin=stdin):
                proc = subprocess.run(
                    [sys.executable, "-m", "platform_runtime.server", "--port", "0",
                     "--control-secret-stdin", "--quiet"],
                    input=stdin, capture_output=True, timeout=60, cwd=RUNTIME_DIR, env=env)
                self.assertNotEqual(proc.returncode, 0)
                self.assertEqual(proc.stdout, b"")  # never announced a port
                self.assertIn(b"secret", proc.stderr)


if __name__ == "__main__":
    unittest.main()
