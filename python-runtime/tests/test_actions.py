"""Actions on the same runtime: handler(event, context) -> {statusCode, body}."""

from __future__ import annotations

import json
import unittest
from textwrap import dedent

from .support import RuntimeServer, error_of, of_type


class ActionsTest(unittest.TestCase):
    server: RuntimeServer

    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def result_of(self, events: list[dict]) -> dict:
        results = of_type(events, "result")
        self.assertEqual(len(results), 1, events)
        return results[0]

    def test_success_with_event_keys_and_context(self) -> None:
        source = dedent('''
            import json


            def handler(event, context):
                print("got", event["city"])
                return {
                    "statusCode": 200,
                    "headers": {"Content-Type": "application/json"},
                    "body": {
                        "city": event["city"],
                        "keyNames": sorted(event["keys"]),
                        "requestId": context.aws_request_id,
                        "functionName": context.function_name,
                        "memory": context.memory_limit_in_mb,
                        "remaining": context.get_remaining_time_in_millis(),
                    },
                }
            ''')
        events = self.server.action(source, {"city": "Paris"}, requestId="act-req-1",
                                    functionName="act-weather", memoryMb=256, timeoutMs=5000,
                                    env={"SVC_KEYS_JSON": json.dumps({"WEATHER_KEY": "w", "OTHER": "o"})})
        result = self.result_of(events)
        self.assertEqual(result["statusCode"], 200)
        self.assertEqual(result["headers"], {"Content-Type": "application/json"})
        body = result["body"]
        self.assertEqual(body["city"], "Paris")
        self.assertEqual(body["keyNames"], ["OTHER", "WEATHER_KEY"])
        self.assertEqual((body["requestId"], body["functionName"], body["memory"]),
                         ("act-req-1", "act-weather", 256))
        self.assertTrue(0 < body["remaining"] <= 5000)
        self.assertEqual(of_type(events, "log")[0], {"type": "log", "stream": "stdout", "data": "got Paris"})
        self.assertIsNone(error_of(events))
        self.assertEqual([e["type"] for e in events][0], "start")
        self.assertEqual(events[-1]["type"], "end")

    def test_keys_given_in_the_event_win(self) -> None:
        source = 'def handler(event, context):\n    return {"statusCode": 200, "body": event["keys"]}\n'
        events = self.server.action(source, {"keys": {"A": "from-event"}},
                                    env={"SVC_KEYS_JSON": json.dumps({"A": "from-env"})})
        self.assertEqual(self.result_of(events)["body"], {"A": "from-event"})
        events = self.server.action(source, {})
        self.assertEqual(self.result_of(events)["body"], {})

    def test_raising_handler(self) -> None:
        source = 'def handler(event, context):\n    return {"statusCode": 200, "body": event["missing"]}\n'
        events = self.server.action(source, {})
        error = error_of(events)
        self.assertEqual(error["code"], "HANDLER_ERROR")
        self.assertEqual(error["message"], "KeyError: 'missing'")
        self.assertEqual((error["errorType"], error["line"]), ("KeyError", 2))
        self.assertEqual(of_type(events, "result"), [])

    def test_result_without_status_code(self) -> None:
        for returned in ('{"body": "x"}', '"just a string"', 'None', '{"statusCode": "200"}'):
            with self.subTest(returned):
                source = f"def handler(event, context):\n    return {returned}\n"
                error = error_of(self.server.action(source))
                self.assertEqual(error["code"], "INVALID_HANDLER_RESULT")
                self.assertIn("statusCode", error["message"])

    def test_body_that_is_not_json(self) -> None:
        source = 'def handler(event, context):\n    return {"statusCode": 200, "body": {1, 2}.union}\n'
        error = error_of(self.server.action(source))
        self.assertEqual(error["code"], "INVALID_HANDLER_RESULT")

    def test_missing_handler(self) -> None:
        error = error_of(self.server.action("def other(event, context):\n    pass\n"))
        self.assertEqual(error["code"], "HANDLER_NOT_FOUND")

    def test_async_handler(self) -> None:
        source = 'async def handler(event, context):\n    return {"statusCode": 201, "body": "made"}\n'
        result = self.result_of(self.server.action(source))
        self.assertEqual((result["statusCode"], result["body"]), (201, "made"))

    def test_memory_limit(self) -> None:
        source = ('def handler(event, context):\n    data = "x" * (event["mb"] * 1024 * 1024)\n'
                  '    return {"statusCode": 200, "body": len(data)}\n')
        events = self.server.action(source, {"mb": 1024}, memoryMb=128)
        self.assertEqual(error_of(events)["code"], "MEMORY_LIMIT_EXCEEDED")
        self.assertEqual(self.result_of(self.server.action(source, {"mb": 8}, memoryMb=128))["body"],
                         8 * 1024 * 1024)

    def test_timeout(self) -> None:
        source = 'import time\n\n\ndef handler(event, context):\n    time.sleep(30)\n'
        events = self.server.action(source, timeoutMs=600)
        self.assertEqual(error_of(events)["code"], "TIMEOUT")
        self.assertEqual(of_type(events, "result"), [])

    def test_exit_is_an_error_not_a_crash(self) -> None:
        source = 'def handler(event, context):\n    raise SystemExit(3)\n'
        error = error_of(self.server.action(source))
        self.assertEqual(error["code"], "HANDLER_ERROR")
        self.assertIn("exit", error["message"])


if __name__ == "__main__":
    unittest.main()
