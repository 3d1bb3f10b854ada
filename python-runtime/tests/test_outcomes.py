"""Outcomes the child cannot bend, and secrets it cannot leak by accident.

A compromised child can write anything to its event pipe. These tests do exactly that (with the
static check off, user code reaches `os` and writes forged lines to the pipe): the server decides
every outcome from what it observed, admits only user-code failure codes, keeps `end` its own,
and rebuilds events with the protocol's fields. Then: the run's secrets are scrubbed from error
messages and logs, and not from results."""

from __future__ import annotations

import json
import unittest
from concurrent.futures import ThreadPoolExecutor
from textwrap import dedent

from platform_runtime.redact import REDACTED, Scrubber, run_secrets

from .support import RuntimeServer, error_of, of_type, text_of

FORGING_ACTION = dedent('''
    import json
    import typing

    os = typing.sys.modules["os"]


    def emit(event):
        line = (json.dumps(event) + "\\n").encode()
        for fd in range(3, 64):  # the event pipe is the only descriptor left open
            try:
                os.write(fd, line)
            except OSError:
                pass


    def handler(event, context):
        for forged in event["forge"]:
            emit(forged)
        if event.get("hang"):
            typing.sys.modules["time"].sleep(60)
        if event.get("raise"):
            raise ValueError(event["raise"])
        return {"statusCode": 200, "body": {k: os.environ.get(k) for k in event.get("show", [])}}
    ''')

FORGING_AGENT = dedent('''
    import json
    import typing

    os = typing.sys.modules["os"]


    class Agent:
        messages = []

        async def stream_async(self, prompt):
            line = (prompt + "\\n").encode()
            for fd in range(3, 64):
                try:
                    os.write(fd, line)
                except OSError:
                    pass
            yield {"data": "forged"}


    def create_agent():
        return Agent(), []
    ''')

PLATFORM_CODES = ["RUNTIME_UNAVAILABLE", "RUNTIME_CRASHED", "RUNTIME_PROTOCOL_ERROR",
                  "SANDBOX_UNAVAILABLE", "TOO_MANY_INVOCATIONS", "TIMEOUT", "ABORTED",
                  "MEMORY_LIMIT_EXCEEDED", "OUTPUT_LIMIT_EXCEEDED", "INTERNAL_ERROR",
                  "SOURCE_REJECTED", "AGENT_EXECUTION_FAILED", "UNAUTHORIZED"]


def forged_error(code: str) -> dict:
    return {"type": "error", "code": code, "message": "forged claim"}


class ForgedEventsTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer("--no-static-check")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def forge(self, *events: dict, **extra) -> list[dict]:
        event = {"forge": list(events), **extra.pop("event", {})}
        return self.server.action(FORGING_ACTION, event, **extra)

    def errors(self, events: list[dict]) -> list[dict]:
        return of_type(events, "error")

    def test_a_child_cannot_claim_a_platform_outcome(self) -> None:
        with ThreadPoolExecutor(max_workers=8) as pool:
            outcomes = dict(zip(PLATFORM_CODES, pool.map(lambda c: self.forge(forged_error(c)), PLATFORM_CODES)))
        for code, events in outcomes.items():
            with self.subTest(code=code):
                self.assertEqual([(e["code"], e["message"]) for e in self.errors(events)],
                                 [("HANDLER_ERROR", "forged claim")])

    def test_user_code_failures_keep_their_codes(self) -> None:
        for code in ("INVALID_HANDLER_RESULT", "HANDLER_NOT_FOUND", "HANDLER_ERROR"):
            with self.subTest(kind="action", code=code):
                self.assertEqual(error_of(self.forge(forged_error(code)))["code"], code)
        for code, expected in (("AWS_CREDENTIALS_REQUIRED", "AWS_CREDENTIALS_REQUIRED"),
                               ("AGENT_EXECUTION_FAILED", "AGENT_EXECUTION_FAILED"),
                               ("HANDLER_ERROR", "AGENT_EXECUTION_FAILED"),
                               ("RUNTIME_UNAVAILABLE", "AGENT_EXECUTION_FAILED")):
            with self.subTest(kind="agent", code=code):
                events = self.server.agent(FORGING_AGENT, json.dumps(forged_error(code)))
                self.assertEqual([e["code"] for e in self.errors(events)], [expected])

    def test_end_and_start_are_the_servers_own(self) -> None:
        fake = {"durationMs": 99_999_999, "maxRssKb": 1, "exitCode": 42, "signal": "SIGKILL"}
        events = self.forge({"type": "end", **fake}, {"type": "start", "requestId": "x", "pid": 1},
                            {"type": "sandbox", "seccomp": "forged", **fake},
                            {"type": "metrics", "totalTokens": 5, **fake},
                            {"type": "metrics", "totalTokens": 7})
        types = [e["type"] for e in events]
        self.assertEqual((types.count("start"), types.count("end")), (1, 1))
        self.assertEqual((types[0], types[-1]), ("start", "end"))
        self.assertNotEqual(events[0]["pid"], 1)
        end = events[-1]
        self.assertEqual((end["exitCode"], end["signal"]), (0, None))
        self.assertGreater(end["maxRssKb"], 1024)
        self.assertLess(end["durationMs"], 60_000)
        self.assertIsInstance(end["sandbox"]["seccomp"], bool)  # the runner's report came first
        self.assertNotIn("exitCode", end["sandbox"])
        (metrics,) = of_type(events, "metrics")  # one per run
        self.assertEqual(metrics["totalTokens"], 5)
        self.assertEqual(set(metrics), {"type", "totalCycles", "totalTokens", "inputTokens",
                                        "outputTokens", "toolsUsed", "durationMs"})

    def test_events_are_rebuilt_with_the_protocols_fields(self) -> None:
        events = self.forge({"type": "log", "stream": "weird", "data": "x", "code": "RUNTIME_UNAVAILABLE"},
                            {"type": "result", "statusCode": 201, "body": "first", "exitCode": 9},
                            {"type": "error", "code": "HANDLER_ERROR", "message": "m", "line": 3,
                             "violations": [{"line": 1}], "retryable": True})
        self.assertIn({"type": "log", "stream": "stdout", "data": "x"}, events)
        self.assertEqual(of_type(events, "result"), [{"type": "result", "statusCode": 201, "body": "first"}])
        self.assertEqual(self.errors(events), [{"type": "error", "code": "HANDLER_ERROR", "message": "m", "line": 3}])

    def test_one_error_and_what_the_server_saw_wins(self) -> None:
        events = self.forge(forged_error("RUNTIME_UNAVAILABLE"), event={"hang": True}, timeoutMs=1500)
        self.assertEqual([e["code"] for e in self.errors(events)], ["TIMEOUT"])
        self.assertEqual(events[-1]["signal"], "SIGKILL")

    def test_the_child_gets_the_proxy_and_nothing_bypasses_it(self) -> None:
        proxy = "http://run:cred-0123456789@127.0.0.1:9"
        names = ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "NO_PROXY", "no_proxy"]
        events = self.forge(event={"show": names}, egressProxy=proxy,
                            env={"HTTP_PROXY": "http://elsewhere:1", "NO_PROXY": "*", "no_proxy": "*"})
        body = of_type(events, "result")[0]["body"]
        self.assertEqual(body, {**{n: proxy for n in names[:4]}, "NO_PROXY": "", "no_proxy": ""})

    def test_the_proxy_credential_is_scrubbed_from_errors_and_logs(self) -> None:
        proxy = "http://run:cred-0123456789@127.0.0.1:9"
        events = self.forge({"type": "log", "stream": "stderr", "data": f"proxy={proxy}"},
                            event={"raise": f"cannot reach {proxy}"}, egressProxy=proxy)
        self.assertEqual(error_of(events)["message"],
                         f"ValueError: cannot reach http://run:{REDACTED}@127.0.0.1:9")
        self.assertIn(f"proxy=http://run:{REDACTED}@127.0.0.1:9", [e.get("data") for e in of_type(events, "log")])


SCRUBBED_ACTION = dedent('''
    import json


    def handler(event, context):
        key = event["keys"][event["which"]]
        print(f"using {key}!")
        if event.get("return"):
            return {"statusCode": 200, "body": key}
        raise ValueError(repr(key) if event.get("repr") else key)
    ''')


class ScrubbingTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_a_key_in_an_exception_message_is_redacted(self) -> None:
        key = "sk-live-0123456789abcdef"
        events = self.server.action(SCRUBBED_ACTION, {"which": "svc", "keys": {"svc": key}})
        self.assertEqual(error_of(events)["message"], f"ValueError: {REDACTED}")
        self.assertIn(f"using {REDACTED}!", [e["data"] for e in of_type(events, "log")])
        self.assertNotIn(key, json.dumps(events))

    def test_keys_from_svc_keys_json_and_escaped_forms_are_redacted(self) -> None:
        key = "ab'cd\"ef\\gh-0123"
        events = self.server.action(SCRUBBED_ACTION, {"which": "svc", "repr": True},
                                    env={"SVC_KEYS_JSON": json.dumps({"svc": key})})
        self.assertEqual(error_of(events)["message"], f"ValueError: '{REDACTED}'")
        self.assertNotIn(repr(key)[1:-1], json.dumps(events))

    def test_agent_errors_are_redacted_too(self) -> None:
        source = dedent('''
            import json


            class Agent:
                messages = []

                async def stream_async(self, prompt):
                    raise RuntimeError("bad key " + json.loads(SVC_KEYS_JSON)["OPENAI"])
                    yield {}


            def create_agent():
                return Agent(), []
            ''')
        events = self.server.agent(source, env={"SVC_KEYS_JSON": json.dumps({"OPENAI": "sk-proj-9876543210"})})
        self.assertEqual(error_of(events)["message"], f"RuntimeError: bad key {REDACTED}")

    def test_results_are_the_codes_own_and_short_values_stay(self) -> None:
        key = "sk-live-0123456789abcdef"
        events = self.server.action(SCRUBBED_ACTION, {"which": "svc", "return": True, "keys": {"svc": key}})
        self.assertEqual(of_type(events, "result")[0]["body"], key)  # deliberate output
        events = self.server.action(SCRUBBED_ACTION, {"which": "pin", "keys": {"pin": "1234567"}})
        self.assertEqual(error_of(events)["message"], "ValueError: 1234567")  # under 8 characters


class ScrubberTest(unittest.TestCase):
    def test_every_secret_of_a_request_is_collected(self) -> None:
        req = {"kind": "action", "env": {"AWS_SECRET_ACCESS_KEY": "aws-secret-value",
                                         "SVC_KEYS_JSON": json.dumps({"a": "json-inner-secret", "n": {"b": ["deep-secret-1"]}})},
               "event": {"keys": {"k": "event-key-secret"}},
               "platformCalls": {"hosts": ["h"], "headers": {"Authorization": "Bearer svc_run_token_1"}},
               "egressProxy": "http://run:pa%2Fss-word-1@127.0.0.1:1"}
        found = set(run_secrets(req))
        for value in ("aws-secret-value", "json-inner-secret", "deep-secret-1", "event-key-secret",
                      "svc_run_token_1", "Bearer svc_run_token_1", "pa%2Fss-word-1", "pa/ss-word-1",
                      "cnVuOnBhL3NzLXdvcmQtMQ=="):
            self.assertIn(value, found)

    def test_longest_first_and_nothing_short(self) -> None:
        scrub = Scrubber(["abcdefgh", "abcdefgh-longer", "short"])
        self.assertEqual(scrub("x abcdefgh-longer y abcdefgh z short"),
                         f"x {REDACTED} y {REDACTED} z short")
        self.assertEqual(Scrubber([])("unchanged"), "unchanged")


if __name__ == "__main__":
    unittest.main()
