"""The runtime adds the platform's headers (the owner's short-lived credential and the run's
lineage) to requests a run makes to the platform's own hosts, and to no other host."""

import http.server
import json
import os
import threading
import unittest

from .support import FIXTURES_DIR, RuntimeServer, error_of, text_of

AGENT = """
import json
from mcp.client.streamable_http import streamablehttp_client


class Caller:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        results = []
        for target in json.loads(prompt):
            client = streamablehttp_client(target["url"], target.get("headers"))
            status, _ = client.call_tool("echo", {"x": 1})
            results.append(status)
        yield {"data": json.dumps(results)}


def create_agent():
    return Caller(), []
"""


class _Recorder(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        length = int(self.headers.get("content-length") or 0)
        self.rfile.read(length)
        self.server.seen.append({k.lower(): v for k, v in self.headers.items()})
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {"content": []}}).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def _start_recorder():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Recorder)
    server.seen = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


class PlatformCallsTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        previous = os.environ.get("PYTHONPATH")
        os.environ["PYTHONPATH"] = os.path.join(FIXTURES_DIR, "fake_mcp")
        try:
            cls.server = RuntimeServer()
        finally:
            if previous is None:
                del os.environ["PYTHONPATH"]
            else:
                os.environ["PYTHONPATH"] = previous
        cls.platform = _start_recorder()
        cls.elsewhere = _start_recorder()

    @classmethod
    def tearDownClass(cls):
        cls.server.stop()
        cls.platform.shutdown()
        cls.elsewhere.shutdown()

    def test_adds_headers_only_to_platform_hosts_and_keeps_the_callers_own(self):
        # Prepare
        platform_host = f"127.0.0.1:{self.platform.server_port}"
        other_host = f"127.0.0.1:{self.elsewhere.server_port}"
        targets = [
            {"url": f"http://{platform_host}/mcp/mcp-abc"},
            {"url": f"http://{other_host}/mcp"},
            {"url": f"http://{platform_host}/mcp/mcp-abc", "headers": {"Authorization": "Bearer mine"}},
        ]
        calls = {"hosts": [platform_host], "headers": {"Authorization": "Bearer svc_run_test", "X-Svc-Lineage": "root=r1;parent=p1;agent=a1"}}
        # Act
        events = self.server.agent(AGENT, prompt=json.dumps(targets), allowHosts=[platform_host, other_host], platformCalls=calls)
        # Assess
        self.assertIsNone(error_of(events), events)
        self.assertEqual(json.loads(text_of(events)), [200, 200, 200])
        first, own = self.platform.seen
        self.assertEqual(first["authorization"], "Bearer svc_run_test")
        self.assertEqual(first["x-svc-lineage"], "root=r1;parent=p1;agent=a1")
        self.assertEqual(own["authorization"], "Bearer mine")
        self.assertEqual(own["x-svc-lineage"], "root=r1;parent=p1;agent=a1")
        (other,) = self.elsewhere.seen
        self.assertNotIn("authorization", other)
        self.assertNotIn("x-svc-lineage", other)

    def test_refuses_malformed_platform_calls(self):
        status, body, _ = self.server.request_json("POST", "/invoke", {"kind": "agent", "source": AGENT, "prompt": "[]", "platformCalls": {"hosts": "nope"}})
        self.assertEqual(status, 400)
        self.assertIn("platformCalls.hosts", json.dumps(body))


if __name__ == "__main__":
    unittest.main()
