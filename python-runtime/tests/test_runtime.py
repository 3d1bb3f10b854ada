"""The runtime server with agents: the streaming protocol, the plain-Python test agents, the
sandbox at run time, limits, crashes and concurrency. Real server processes on loopback."""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import tempfile
import threading
import time
import unittest
from concurrent.futures import ThreadPoolExecutor
from textwrap import dedent

from .support import RuntimeServer, error_of, fixture, of_type, text_of

ECHO = fixture("echo_agent.py")
HISTORY = fixture("history_agent.py")
TOOLS = fixture("tool_agent.py")
RAISING = fixture("raising_agent.py")
SLEEPING = fixture("sleeping_agent.py")


def agent_doing(body: str, imports: str = "") -> str:
    """A plain agent whose stream runs `body` and yields its `result` variable as text."""
    inner = "\n".join("        " + line for line in dedent(body).strip().splitlines())
    return (f"{imports}\n\n\nclass A:\n    def __init__(self):\n        self.messages = []\n\n"
            f"    async def stream_async(self, prompt):\n        result = None\n{inner}\n"
            f"        yield {{\"data\": str(result)}}\n\n\ndef create_agent():\n    return A(), []\n")


class ProtocolTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_health(self) -> None:
        status, body, _ = self.server.request_json("GET", "/health")
        self.assertEqual(status, 200)
        self.assertEqual(body["status"], "ok")
        self.assertTrue(body["zygote"]["alive"])
        self.assertEqual(body["zygote"]["threads"], 1)  # the fork server never has threads
        for name in ("json", "datetime", "urllib.parse", "asyncio"):
            self.assertIn(name, body["preloaded"])
        self.assertTrue(body["staticCheck"])

    def test_echo_agent_streams_text_metrics_messages_and_end(self) -> None:
        events = self.server.agent(ECHO, "hello world", requestId="req-1")
        types = [e["type"] for e in events]
        self.assertEqual(types[0], "start")
        self.assertEqual(events[0]["requestId"], "req-1")
        self.assertEqual(types[-1], "end")
        self.assertEqual(types.count("end"), 1)
        self.assertGreaterEqual(types.count("text"), 3)  # chunk by chunk, not one blob
        self.assertEqual(text_of(events), "echo: hello world")
        metrics = of_type(events, "metrics")[0]
        self.assertEqual((metrics["totalCycles"], metrics["totalTokens"]), (1, 7))
        self.assertEqual((metrics["inputTokens"], metrics["outputTokens"]), (3, 4))
        self.assertIsInstance(metrics["durationMs"], int)
        messages = of_type(events, "messages")[0]["messages"]
        self.assertEqual([m["role"] for m in messages], ["user", "assistant"])
        self.assertEqual(messages[1]["content"], [{"text": "echo: hello world"}])
        end = events[-1]
        self.assertEqual(end["exitCode"], 0)
        self.assertGreater(end["maxRssKb"], 0)
        self.assertIsNone(error_of(events))

    def test_events_are_flushed_as_they_happen(self) -> None:
        arrivals = list(self.server.stream({"kind": "agent", "source": SLEEPING, "prompt": "1.0"}))
        first_text = next(t for t, e in arrivals if e["type"] == "text")
        end = next(t for t, e in arrivals if e["type"] == "end")
        self.assertEqual(text_of([e for _t, e in arrivals]), "sleeping awake")
        self.assertGreater(end - first_text, 0.7)  # the first chunk did not wait for the end

    def test_history_is_restored_into_agent_messages(self) -> None:
        history = [
            {"role": "user", "content": [{"text": "hi"}]},
            {"role": "assistant", "content": [{"text": "hello"}]},
            {"role": "user", "content": "plain string content is accepted too"},
        ]
        events = self.server.agent(HISTORY, "and now?", messages=history)
        self.assertEqual(text_of(events), "history=3 roles=user,assistant,user")
        stored = of_type(events, "messages")[0]["messages"]
        self.assertEqual(len(stored), 5)
        self.assertEqual(stored[2]["content"], [{"text": "plain string content is accepted too"}])
        self.assertEqual(text_of(self.server.agent(HISTORY, "first")), "history=0 roles=")

    def test_tool_events_once_per_tool_use_and_mcp_clients_entered(self) -> None:
        events = self.server.agent(TOOLS, "weather?")
        tools = of_type(events, "tool")
        self.assertEqual([(t["name"], t["toolUseId"]) for t in tools],
                         [("weather", "tool-1"), ("calculator", "tool-2")])
        self.assertEqual(text_of(events), "mcp entered done")
        metrics = of_type(events, "metrics")[0]
        self.assertEqual(metrics["toolsUsed"], ["weather", "calculator"])
        self.assertEqual(metrics["totalTokens"], 15)
        # tool events come between the text chunks, in stream order
        order = [e["type"] for e in events if e["type"] in ("text", "tool")]
        self.assertEqual(order, ["text", "tool", "tool", "text"])

    def test_agent_without_history_gets_the_turn_recorded(self) -> None:
        source = agent_doing("result = 'plain'")
        events = self.server.agent(source, "q")
        messages = of_type(events, "messages")[0]["messages"]
        self.assertEqual(messages, [{"role": "user", "content": [{"text": "q"}]},
                                    {"role": "assistant", "content": [{"text": "plain"}]}])

    def test_keys_reach_the_agent(self) -> None:
        source = agent_doing('result = json.loads(SVC_KEYS_JSON)["OPENAI"]', "import json")
        events = self.server.agent(source, env={"SVC_KEYS_JSON": json.dumps({"OPENAI": "sk-1"})})
        self.assertEqual(text_of(events), "sk-1")

    def test_raising_agent_fails_cleanly_and_the_next_call_works(self) -> None:
        events = self.server.agent(RAISING)
        self.assertEqual(text_of(events), "about to fail")
        error = error_of(events)
        self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
        self.assertEqual(error["message"], "ValueError: the agent broke on purpose")
        self.assertEqual(error["line"], 10)
        self.assertNotIn("platform_runtime", json.dumps(error))
        self.assertEqual(events[-1]["type"], "end")
        self.assertEqual(text_of(self.server.agent(ECHO, "again")), "echo: again")

    def test_crash_at_import_time(self) -> None:
        events = self.server.agent("import json\n\nraise RuntimeError('bad module')\n")
        error = error_of(events)
        self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
        self.assertEqual((error["message"], error["line"]), ("RuntimeError: bad module", 3))

    def test_missing_create_agent(self) -> None:
        error = error_of(self.server.agent("x = 1\n"))
        self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
        self.assertIn("create_agent", error["message"])

    def test_framework_module_that_is_not_installed(self) -> None:
        source = "from strands.models.zz_not_installed import Model\n\n\ndef create_agent():\n    return None, []\n"
        error = error_of(self.server.agent(source))
        self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
        self.assertIn("No module named 'strands", error["message"])
        self.assertEqual(error["errorType"], "ModuleNotFoundError")

    def test_missing_credentials_error_by_class_name(self) -> None:
        source = dedent('''
            class NoCredentialsError(Exception):
                pass


            class A:
                messages = []

                async def stream_async(self, prompt):
                    yield {"data": "calling the model"}
                    raise RuntimeError("model call failed") from NoCredentialsError("Unable to locate credentials")


            def create_agent():
                return A(), []
            ''')
        error = error_of(self.server.agent(source))
        self.assertEqual(error["code"], "AWS_CREDENTIALS_REQUIRED")

    def test_missing_credentials_with_the_real_aws_sdk(self) -> None:
        _s, health, _ = self.server.request_json("GET", "/health")
        if "boto3" not in health["preloaded"]:
            self.skipTest("boto3 is not installed for this interpreter")
        source = agent_doing('''
            client = boto3.client("bedrock-runtime", region_name="us-east-1")
            client.invoke_model(modelId="amazon.titan-text-lite-v1", body=json.dumps({"inputText": prompt}))
            ''', "import json\nimport boto3")
        events = self.server.agent(source, allowHosts=["bedrock-runtime.us-east-1.amazonaws.com"])
        error = error_of(events)
        self.assertEqual(error["code"], "AWS_CREDENTIALS_REQUIRED", error)
        self.assertIn("NoCredentialsError", error["message"])

    def test_source_breaking_the_rules_is_rejected_before_running(self) -> None:
        events = self.server.agent("import os\n\n\ndef create_agent():\n    return os, []\n")
        self.assertEqual([e["type"] for e in events], ["error", "end"])
        error = events[0]
        self.assertEqual(error["code"], "SOURCE_REJECTED")
        self.assertEqual(error["violations"][0]["line"], 1)

    def test_check_endpoint(self) -> None:
        status, body, _ = self.server.request_json("POST", "/check", {"source": "import os\nx = eval('1')\n"})
        self.assertEqual(status, 200)
        self.assertEqual([v["line"] for v in body["violations"]], [1, 2])
        status, body, _ = self.server.request_json("POST", "/check", {"source": "import json\n"})
        self.assertEqual(body, {"ok": True, "violations": []})

    def test_bad_requests(self) -> None:
        cases = [
            ({"kind": "agent", "source": ECHO}, "prompt"),
            ({"kind": "job", "source": ECHO}, "kind"),
            ({"kind": "action", "source": ""}, "source"),
            ({"kind": "action", "source": "x=1", "timeoutMs": 0}, "timeoutMs"),
            ({"kind": "action", "source": "x=1", "memoryMb": "lots"}, "memoryMb"),
            ({"kind": "action", "source": "x=1", "env": {"A": 1}}, "env"),
            ({"kind": "action", "source": "x=1", "allowHosts": "example.com"}, "allowHosts"),
            ([1, 2], "object"),
        ]
        for body, field in cases:
            with self.subTest(field):
                status, payload, _ = self.server.request_json("POST", "/invoke", body)
                self.assertEqual(status, 400)
                self.assertEqual(payload["error"]["code"], "INVALID_PARAMETERS")
                self.assertIn(field, payload["error"]["message"])
        status, payload, _ = self.server.request_json("POST", "/invoke", raw=b"{not json")
        self.assertEqual((status, payload["error"]["code"]), (400, "INVALID_PARAMETERS"))
        status, _payload, _ = self.server.request_json("GET", "/nope")
        self.assertEqual(status, 404)


class LimitsAndCrashesTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_timeout_kills_the_child(self) -> None:
        started = time.monotonic()
        events = self.server.agent(SLEEPING, "30", timeoutMs=700)
        elapsed = time.monotonic() - started
        self.assertEqual(text_of(events), "sleeping")
        self.assertEqual(error_of(events)["code"], "TIMEOUT")
        self.assertEqual(events[-1]["signal"], "SIGKILL")
        self.assertLess(elapsed, 5)
        self.assertGreaterEqual(events[-1]["durationMs"], 700)

    def test_a_caller_hanging_up_stops_a_silent_run(self) -> None:
        # Prepare: a run that writes once, then stays silent for 30 s
        stream = self.server.stream({"kind": "agent", "source": SLEEPING, "prompt": "30", "timeoutMs": 60_000})
        pid = None
        for _at, event in stream:
            if event["type"] == "start":
                pid = event["pid"]
            if event["type"] == "text":
                break
        self.assertIsNotNone(pid)
        # Act: hang up (closing the generator closes the connection)
        stream.close()
        # Assess: the child is gone long before its 30 s are up (bounded wait on the process itself)
        gone_by = time.monotonic() + 10
        while time.monotonic() < gone_by:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.05)
        with self.assertRaises(ProcessLookupError):
            os.kill(pid, 0)

    def test_memory_limit(self) -> None:
        source = agent_doing("data = bytearray(int(prompt) * 1024 * 1024)\nresult = len(data)")
        events = self.server.agent(source, "512", memoryMb=64)
        self.assertEqual(error_of(events)["code"], "MEMORY_LIMIT_EXCEEDED")
        # the same agent within its limit
        events = self.server.agent(source, "16", memoryMb=64)
        self.assertIsNone(error_of(events))
        self.assertEqual(text_of(events), str(16 * 1024 * 1024))

    def test_server_survives_a_segfault_and_a_kill(self) -> None:
        for sig in (signal.SIGSEGV, signal.SIGKILL):
            with self.subTest(signal=sig.name):
                events = []
                for _t, event in self.server.stream({"kind": "agent", "source": SLEEPING, "prompt": "20"}):
                    events.append(event)
                    if event["type"] == "start":
                        pid = event["pid"]
                    if event["type"] == "text":
                        os.kill(pid, sig)
                error = error_of(events)
                self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
                self.assertIn(sig.name, error["message"])
                self.assertEqual(events[-1]["signal"], sig.name)
                status, health, _ = self.server.request_json("GET", "/health")
                self.assertEqual((status, health["status"]), (200, "ok"))
                self.assertEqual(text_of(self.server.agent(ECHO, "still here")), "echo: still here")

    def test_fork_server_death_is_survived(self) -> None:
        if not hasattr(os, "pidfd_open"):
            self.skipTest("needs os.pidfd_open to wait for the process without sleeping")
        _s, health, _ = self.server.request_json("GET", "/health")
        zygote_pid = health["zygote"]["pid"]
        pidfd = os.pidfd_open(zygote_pid)
        try:
            os.kill(zygote_pid, signal.SIGKILL)
            ready, _, _ = select.select([pidfd], [], [], 10)  # readable once it has exited
            self.assertTrue(ready)
        finally:
            os.close(pidfd)
        self.assertEqual(text_of(self.server.agent(ECHO, "after restart")), "echo: after restart")
        _s, health, _ = self.server.request_json("GET", "/health")
        self.assertNotEqual(health["zygote"]["pid"], zygote_pid)
        self.assertEqual(health["status"], "ok")

    def test_large_request_and_response(self) -> None:
        history = [{"role": "user" if i % 2 == 0 else "assistant", "content": [{"text": "x" * 500}]}
                   for i in range(2000)]  # ~1.2 MB: far more than a pipe buffer
        events = self.server.agent(HISTORY, "big", messages=history)
        self.assertTrue(text_of(events).startswith("history=2000 "))
        self.assertEqual(len(of_type(events, "messages")[0]["messages"]), 2002)

    def test_concurrent_invocations_are_independent(self) -> None:
        def call(args):
            kind, prompt = args
            source = SLEEPING if kind == "sleep" else ECHO
            events = self.server.agent(source, prompt, timeoutMs=20_000)
            return kind, prompt, time.monotonic(), events

        jobs = [("sleep", "1.5")] + [("echo", f"caller {i}") for i in range(6)]
        with ThreadPoolExecutor(max_workers=len(jobs)) as pool:
            results = list(pool.map(call, jobs))
        sleep_done = results[0][2]
        self.assertEqual(text_of(results[0][3]), "sleeping awake")
        pids = set()
        for kind, prompt, finished, events in results[1:]:
            self.assertEqual(text_of(events), f"echo: {prompt}")
            self.assertLess(finished, sleep_done)  # not queued behind the sleeper
            pids.add(events[0]["pid"])
        self.assertEqual(len(pids), 6)  # one child each


class SandboxAtRunTimeTest(unittest.TestCase):
    """The sandbox on its own: a server with the static check off runs code that reaches
    os, socket and subprocess through sys.modules, as if the checker had missed it."""

    server: RuntimeServer
    checked: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer("--no-static-check")
        cls.tmp = tempfile.mkdtemp(prefix="sandbox-test-")
        cls.secret = os.path.join(cls.tmp, "secret.txt")
        with open(cls.secret, "w") as fh:
            fh.write("top secret")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()
        for name in os.listdir(cls.tmp):
            os.unlink(os.path.join(cls.tmp, name))
        os.rmdir(cls.tmp)

    def run_code(self, body: str, **extra) -> list[dict]:
        return self.server.agent(agent_doing(body, "import typing"), "p", **extra)

    def test_file_read_outside_the_runtime_is_denied(self) -> None:
        for path in (self.secret, "/etc/passwd", f"/proc/{os.getpid()}/environ"):
            with self.subTest(path):
                events = self.run_code(f'result = typing.sys.modules["io"].open({path!r}).read()')
                error = error_of(events)
                self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
                self.assertIn("[sandbox:audit] reading files outside the runtime", error["message"])
                self.assertNotIn("top secret", json.dumps(events))

    def test_file_read_inside_the_python_installation_is_allowed(self) -> None:
        events = self.run_code('result = typing.sys.modules["io"].open(typing.__file__).read()[:100]')
        self.assertIsNone(error_of(events))
        self.assertIn("typing", text_of(events))

    def test_any_file_write_is_denied(self) -> None:
        target_tmp = os.path.join(self.tmp, "written.txt")
        target_runtime = os.path.join(os.path.dirname(os.path.dirname(__file__)), "written-by-test.txt")
        for path in (target_tmp, target_runtime, self.secret):
            for mode in ("w", "a", "r+"):
                with self.subTest(path=path, mode=mode):
                    events = self.run_code(
                        f'result = typing.sys.modules["io"].open({path!r}, {mode!r}).write("x")')
                    self.assertIn("opening files for writing is not allowed", error_of(events)["message"])
        self.assertFalse(os.path.exists(target_tmp))
        self.assertFalse(os.path.exists(target_runtime))
        with open(self.secret) as fh:
            self.assertEqual(fh.read(), "top secret")

    def test_file_system_changes_are_denied(self) -> None:
        for call in ('os.remove(SECRET)', 'os.rename(SECRET, SECRET + ".moved")', 'os.mkdir(SECRET + ".d")',
                     'os.chmod(SECRET, 0o777)', 'os.listdir("/etc")'):
            with self.subTest(call):
                events = self.run_code(f'os = typing.sys.modules["os"]\nSECRET = {self.secret!r}\n'
                                       f'result = {call}')
                self.assertIn("[sandbox:audit]", error_of(events)["message"])
        self.assertEqual(os.listdir(self.tmp), ["secret.txt"])

    def test_subprocess_and_process_creation_are_denied(self) -> None:
        marker = os.path.join(self.tmp, "spawned")
        for call in (f'typing.sys.modules["subprocess"].run(["touch", {marker!r}])',
                     f'typing.sys.modules["os"].system("touch {marker}")',
                     'typing.sys.modules["os"].fork()',
                     f'typing.sys.modules["os"].execv("/usr/bin/touch", ["touch", {marker!r}])',
                     f'typing.sys.modules["os"].posix_spawn("/usr/bin/touch", ["touch", {marker!r}], {{}})'):
            with self.subTest(call):
                error = error_of(self.run_code(f"result = {call}"))
                self.assertEqual(error["code"], "AGENT_EXECUTION_FAILED")
                self.assertIn("[sandbox:audit]", error["message"])
        self.assertFalse(os.path.exists(marker))

    def test_process_creation_without_an_audit_event_is_stopped_by_seccomp(self) -> None:
        _s, health, _ = self.server.request_json("GET", "/health")
        if not health["seccompSupported"]:
            self.skipTest("seccomp is not available here")
        marker = os.path.join(self.tmp, "spawned-raw")
        body = (f'os = typing.sys.modules["os"]\nr, w = os.pipe()\n'
                f'result = typing.sys.modules["_posixsubprocess"].fork_exec('
                f'[b"/usr/bin/touch", {marker!r}.encode()], [b"/usr/bin/touch"], True, (w,), None, None, '
                f'-1, -1, -1, -1, -1, -1, r, w, True, False, -1, None, None, None, -1, None, True)')
        events = self.run_code(body)
        self.assertIn("Operation not permitted", error_of(events)["message"])
        self.assertTrue(events[-1]["sandbox"]["seccomp"])
        self.assertFalse(os.path.exists(marker))

    def test_connections_to_unlisted_hosts_are_denied(self) -> None:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(10)
        port = listener.getsockname()[1]
        accepted = []

        def accept_one():
            try:
                conn, _ = listener.accept()
                accepted.append(conn.recv(16))
                conn.close()
            except OSError:
                pass

        code = (f'sock = typing.sys.modules["socket"].create_connection((prompt, {port}), timeout=5)\n'
                f'sock.sendall(b"hello")\nsock.close()\nresult = "connected"')
        try:
            for hosts, target in (([], "127.0.0.1"), (["example.com"], "127.0.0.1"),
                                  ([f"127.0.0.1:{port + 1}"], "127.0.0.1"), ([], "localhost")):
                with self.subTest(hosts=hosts, target=target):
                    events = self.server.agent(agent_doing(code, "import typing"), target, allowHosts=hosts)
                    self.assertIn("are not allowed (not in allowHosts)", error_of(events)["message"])
            # positive controls: a listed address, and a listed name that resolves to it
            for hosts, target in (([f"127.0.0.1:{port}"], "127.0.0.1"), (["localhost"], "localhost")):
                with self.subTest(allowed=hosts):
                    thread = threading.Thread(target=accept_one)
                    thread.start()
                    events = self.server.agent(agent_doing(code, "import typing"), target, allowHosts=hosts)
                    thread.join(15)
                    self.assertIsNone(error_of(events))
                    self.assertEqual(text_of(events), "connected")
            self.assertEqual(accepted, [b"hello", b"hello"])
        finally:
            listener.close()

    def test_unix_sockets_and_listening_are_denied(self) -> None:
        for call in ('s = typing.sys.modules["socket"].socket(typing.sys.modules["socket"].AF_UNIX)\n'
                     'result = s.connect("/var/run/docker.sock")',
                     'result = typing.sys.modules["socket"].create_server(("127.0.0.1", 0))'):
            with self.subTest(call):
                self.assertIn("[sandbox:audit]", error_of(self.run_code(call))["message"])

    def test_limits_cannot_be_raised(self) -> None:
        events = self.run_code('r = typing.sys.modules["resource"]\n'
                               'result = r.setrlimit(r.RLIMIT_AS, (r.RLIM_INFINITY, r.RLIM_INFINITY))')
        self.assertIn("[sandbox:audit]", error_of(events)["message"])

    def test_disallowed_import_at_run_time(self) -> None:
        events = self.server.agent(agent_doing("import os\nresult = os.getcwd()"), "p")
        self.assertIn("[sandbox:import] import of 'os' is not allowed", error_of(events)["message"])
        events = self.server.agent(agent_doing("import json\nresult = json.dumps([1])"), "p")
        self.assertEqual(text_of(events), "[1]")


if __name__ == "__main__":
    unittest.main()
