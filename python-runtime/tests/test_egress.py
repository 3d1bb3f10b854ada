"""--egress-socket: the TCP port on 127.0.0.1 that relays to the platform's proxy (a Unix socket),
and `egressProxy` runs going through it with their credential, while every other destination
stays refused."""

from __future__ import annotations

import base64
import http.server
import json
import os
import secrets
import shutil
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import unittest
from concurrent.futures import ThreadPoolExecutor

from .support import FIXTURES_DIR, RUNTIME_DIR, RuntimeServer, error_of, text_of
from .test_platform_calls import AGENT as MCP_AGENT

FAKE_MCP = os.path.join(FIXTURES_DIR, "fake_mcp")
IO_TIMEOUT_S = 20


class UnixServer:
    """A Unix socket server at `path`; `serve(conn)` runs in a thread per connection."""

    def __init__(self, path: str, serve) -> None:
        self.path = path
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(32)
        self.serve = serve
        self.thread = threading.Thread(target=self._accept, daemon=True)
        self.thread.start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        with conn:
            self.serve(conn)

    def close(self) -> None:
        try:
            self.listener.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.listener.close()
        self.thread.join(IO_TIMEOUT_S)
        os.unlink(self.path)


def echo(conn: socket.socket) -> None:
    while data := conn.recv(65536):
        conn.sendall(data)
    conn.shutdown(socket.SHUT_WR)


def recv_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(65536):
        chunks.append(chunk)
    return b"".join(chunks)


class _ProxyHandler(http.server.BaseHTTPRequestHandler):
    """The platform's HTTP proxy, as far as a run can tell: records what arrives, answers as
    the MCP server would."""

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.seen.append({"requestline": self.requestline, "body": body,
                                 "headers": {k.lower(): v for k, v in self.headers.items()}})
        reply = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def address_string(self) -> str:
        return "unix"

    def log_message(self, *args) -> None:
        pass


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True


class EgressTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.dir = tempfile.mkdtemp(prefix="egress-")
        cls.proxy_path = os.path.join(cls.dir, "egress.sock")
        cls.log = tempfile.TemporaryFile()
        cls.server = RuntimeServer("--egress-socket", cls.proxy_path, pythonpath=FAKE_MCP,
                                   quiet=False, stderr=cls.log)

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        cls.log.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def connect(self) -> socket.socket:
        return socket.create_connection(("127.0.0.1", self.server.egress_port), timeout=IO_TIMEOUT_S)

    def start_proxy(self) -> _UnixHTTPServer:
        proxy = _UnixHTTPServer(self.proxy_path, _ProxyHandler)
        proxy.seen = []
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        self.addCleanup(lambda: (proxy.shutdown(), proxy.server_close(), os.unlink(self.proxy_path)))
        return proxy

    # the forwarder ---------------------------------------------------------------------
    def test_the_listening_line_names_the_egress_port(self) -> None:
        self.assertIsInstance(self.server.egress_port, int)
        self.assertGreater(self.server.egress_port, 0)
        self.assertEqual(set(self.server.announce), {"event", "host", "port", "egressPort"})

    def test_bytes_go_both_ways_unchanged_and_a_half_close_is_passed_on(self) -> None:
        upstream = UnixServer(self.proxy_path, echo)
        self.addCleanup(upstream.close)
        payload = os.urandom(3 * 1024 * 1024 + 17)  # many times the relay's buffer
        with self.connect() as sock:
            sender = threading.Thread(target=lambda: (sock.sendall(payload), sock.shutdown(socket.SHUT_WR)))
            sender.start()
            received = recv_all(sock)  # ends only if the echo's half-close came back
            sender.join(IO_TIMEOUT_S)
        self.assertEqual(received, payload)

    def test_the_proxy_closing_first_reaches_the_client(self) -> None:
        upstream = UnixServer(self.proxy_path, lambda conn: conn.sendall(b"bye"))
        self.addCleanup(upstream.close)
        with self.connect() as sock:
            self.assertEqual(recv_all(sock), b"bye")

    def test_concurrent_connections_stay_apart(self) -> None:
        upstream = UnixServer(self.proxy_path, echo)
        self.addCleanup(upstream.close)

        def exchange(i: int) -> bool:
            data = bytes([i]) * (200_000 + i)
            with self.connect() as sock:
                sock.sendall(data)
                sock.shutdown(socket.SHUT_WR)
                return recv_all(sock) == data

        with ThreadPoolExecutor(max_workers=16) as pool:
            self.assertTrue(all(pool.map(exchange, range(16))))

    def test_without_a_proxy_the_connection_is_closed(self) -> None:
        self.assertFalse(os.path.exists(self.proxy_path))
        with self.connect() as sock:
            try:
                self.assertEqual(sock.recv(1), b"")
            except ConnectionResetError:
                pass

    # runs through the proxy ------------------------------------------------------------
    def proxied_run(self, targets: list[dict], credential: str | None, **extra) -> list[dict]:
        if credential is not None:
            extra["egressProxy"] = f"http://run:{credential}@127.0.0.1:{self.server.egress_port}"
        return self.server.agent(MCP_AGENT, prompt=json.dumps(targets), **extra)

    def test_a_run_reaches_the_proxy_with_its_credential(self) -> None:
        proxy = self.start_proxy()
        credential = secrets.token_urlsafe(24)
        events = self.proxied_run([{"url": "http://mcp.platform.test:4000/mcp/m-1?x=1"}], credential)
        self.assertIsNone(error_of(events), events)
        self.assertEqual(json.loads(text_of(events)), [200])
        (request,) = proxy.seen
        self.assertEqual(request["requestline"], "POST http://mcp.platform.test:4000/mcp/m-1?x=1 HTTP/1.1")
        self.assertEqual(request["headers"]["host"], "mcp.platform.test:4000")
        expected = base64.b64encode(f"run:{credential}".encode()).decode()
        self.assertEqual(request["headers"]["proxy-authorization"], f"Basic {expected}")
        self.assertEqual(json.loads(request["body"])["method"], "tools/call")
        self.log.seek(0)
        logged = self.log.read()
        self.assertIn(b"POST /invoke", logged)  # the access log is on ...
        self.assertNotIn(credential.encode(), logged)  # ... and never shows the credential

    def test_without_the_proxy_the_same_call_is_refused(self) -> None:
        proxy = self.start_proxy()
        events = self.proxied_run([{"url": "http://mcp.platform.test:4000/mcp/m-1"}], None)
        self.assertIn("'mcp.platform.test' are not allowed (not in allowHosts)", error_of(events)["message"])
        self.assertEqual(proxy.seen, [])

    def test_the_proxy_opens_no_other_destination(self) -> None:
        self.start_proxy()
        listener = socket.create_server(("127.0.0.1", 0))
        self.addCleanup(listener.close)
        port = listener.getsockname()[1]
        # https is not proxied by the client: it tries a direct connection
        events = self.proxied_run([{"url": f"https://127.0.0.1:{port}/x"}], secrets.token_urlsafe(24))
        self.assertIn("'127.0.0.1' are not allowed (not in allowHosts)", error_of(events)["message"])
        listener.setblocking(False)
        with self.assertRaises(BlockingIOError):
            listener.accept()  # nothing ever connected

    def test_a_malformed_proxy_url_is_refused_without_repeating_it(self) -> None:
        for url in ("ftp://run:hunter2-secret@127.0.0.1:1", "http://run:hunter2-secret@127.0.0.1",
                    "http://run:hunter2-secret@127.0.0.1:1/path", "http://run:hunter2 secret@h:1", 5):
            with self.subTest(url=url):
                status, body, _ = self.server.request_json("POST", "/invoke", {
                    "kind": "agent", "source": MCP_AGENT, "prompt": "[]", "egressProxy": url})
                self.assertEqual(status, 400)
                self.assertIn("egressProxy", body["error"]["message"])
                self.assertNotIn("hunter2", json.dumps(body))


# A process that forks its forwarder, then refuses Unix socket connects in every thread, as the
# sandbox's audit hook does in a voice session, and sends one line through the forwarder.
_SELF_SANDBOXING = """
import socket, sys
from platform_runtime.egress import EgressForwarder
forwarder = EgressForwarder(sys.argv[1])
forwarder.start_in_child_process()
def refuse_unix(event, args):
    if event == "socket.connect" and isinstance(args[1], str):
        raise PermissionError("unix connects refused")
sys.addaudithook(refuse_unix)
with socket.create_connection(("127.0.0.1", forwarder.port), timeout=20) as sock:
    sock.sendall(b"ping\\n")
    sock.shutdown(socket.SHUT_WR)
    print(sock.recv(100).decode(), end="")
"""


class ForwarderProcessTest(unittest.TestCase):
    def test_a_forked_forwarder_relays_for_a_process_that_refuses_unix_connects(self) -> None:
        # Prepare
        directory = tempfile.mkdtemp(prefix="egress-fork-")
        self.addCleanup(shutil.rmtree, directory, True)
        upstream = UnixServer(os.path.join(directory, "egress.sock"), echo)
        self.addCleanup(upstream.close)
        # Act
        done = subprocess.run([sys.executable, "-c", _SELF_SANDBOXING, upstream.path], capture_output=True,
                              timeout=IO_TIMEOUT_S, cwd=RUNTIME_DIR)
        # Assess: the echo came back, so the connect to the proxy happened outside the hooked process
        self.assertEqual(done.stdout, b"ping\n", done.stderr)


if __name__ == "__main__":
    unittest.main()
