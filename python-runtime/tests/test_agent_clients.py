"""The runner's handling of returned MCP clients and of framework message lists.

The client lifecycle is tested against stand-ins that keep the rules of Strands 1.40 the runner
depends on (strands/tools/mcp/mcp_client.py, strands/tools/registry.py): start() refuses a
running session, the tool registry starts a provider it is given and stops it when its last
consumer goes, list_tools_sync() needs a running session and pages. The real SDK runs the same
forms in test/frameworks/strands-agents.test.ts."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import unittest

from platform_runtime import runner

from .support import RuntimeServer, error_of, of_type, text_of


class SessionRunning(RuntimeError):
    pass


class Page(list):
    def __init__(self, items, token):
        super().__init__(items)
        self.pagination_token = token


class FakeTool:
    def __init__(self, name, client):
        self.tool_name = name
        self.mcp_client = client


class FakeMcpClient:
    """strands.tools.mcp.MCPClient as far as the runner can tell."""

    def __init__(self, *names: str) -> None:
        self.names = list(names)
        self.running = False
        self.starts = 0
        self.stops = 0
        self.provider_started = False
        self.consumers: set = set()

    def _is_session_active(self) -> bool:
        return self.running

    def start(self):
        if self.running:
            raise SessionRunning("the client session is currently running")
        self.running = True
        self.starts += 1
        return self

    def stop(self, exc_type, exc, tb) -> None:
        self.running = False
        self.stops += 1
        self.provider_started = False
        self.consumers = set()

    def list_tools_sync(self, pagination_token=None, **kwargs):
        if not self.running:
            raise RuntimeError("the client session is not running")
        # Two pages, one tool each where there are two: the runner must follow the token.
        if pagination_token is None:
            return Page([FakeTool(self.names[0], self)], "next" if len(self.names) > 1 else None)
        return Page([FakeTool(name, self) for name in self.names[1:]], None)

    async def load_tools(self, **kwargs):
        if not self.provider_started:
            self.start()
            self.provider_started = True
        tools, token = [], None
        while True:
            page = self.list_tools_sync(token)
            tools.extend(page)
            token = page.pagination_token
            if token is None:
                return tools

    def add_consumer(self, consumer_id, **kwargs) -> None:
        self.consumers.add(consumer_id)

    def remove_consumer(self, consumer_id, **kwargs) -> None:
        self.consumers.discard(consumer_id)
        if not self.consumers and self.provider_started:
            self.stop(None, None, None)


class FakeRegistry:
    def __init__(self) -> None:
        self.registry: dict = {}
        self.providers: list = []

    def process_tools(self, tools) -> None:
        for tool in tools:
            if hasattr(tool, "load_tools"):
                self.providers.append(tool)
                tool.add_consumer("registry")
                for loaded in asyncio.run(tool.load_tools()):
                    self.register(loaded)
            else:
                self.register(tool)

    def register(self, tool) -> None:
        if tool.tool_name in self.registry:
            raise ValueError(f"Tool name '{tool.tool_name}' already exists")
        self.registry[tool.tool_name] = tool

    def cleanup(self) -> None:
        for provider in self.providers:
            provider.remove_consumer("registry")


class FakeAgent:
    def __init__(self, tools=()) -> None:
        self.tool_registry = FakeRegistry()
        self.tool_registry.process_tools(list(tools))
        self.cleaned = 0

    def cleanup(self) -> None:
        self.cleaned += 1
        self.tool_registry.cleanup()


def run_forms(agent, clients):
    """open_clients, then what the run sees, then close_clients."""
    to_stop: list = []
    entered: list = []
    runner.open_clients(agent, clients, to_stop, entered)
    tools = sorted(agent.tool_registry.registry)
    running = [client.running for client in clients]
    runner.close_clients(agent, to_stop, entered)
    return tools, running


class McpClientFormsTest(unittest.TestCase):
    def test_spec_form_client_given_to_agent_and_returned_is_not_started_again(self) -> None:
        # Prepare
        client = FakeMcpClient("shout")
        agent = FakeAgent([client])

        # Act
        tools, running = run_forms(agent, [client])

        # Assess
        self.assertEqual(tools, ["shout"])
        self.assertEqual(running, [True])
        self.assertEqual((client.starts, client.stops, client.running), (1, 1, False))
        self.assertEqual(agent.cleaned, 1)

    def test_classic_form_started_by_the_source_is_used_as_is_and_stopped_at_the_end(self) -> None:
        # Prepare
        client = FakeMcpClient("shout", "whisper")
        client.start()
        agent = FakeAgent(runner._listed_tools(client))

        # Act
        tools, running = run_forms(agent, [client])

        # Assess
        self.assertEqual(tools, ["shout", "whisper"])
        self.assertEqual(running, [True])
        self.assertEqual((client.starts, client.stops, client.running), (1, 1, False))

    def test_client_returned_but_not_given_reaches_the_agent_through_its_registry(self) -> None:
        # Prepare
        client = FakeMcpClient("shout", "whisper")
        agent = FakeAgent()

        # Act
        tools, running = run_forms(agent, [client])

        # Assess: both pages registered, the registry started it and the agent's cleanup stopped it
        self.assertEqual(tools, ["shout", "whisper"])
        self.assertEqual(running, [True])
        self.assertEqual(agent.tool_registry.providers, [client])
        self.assertEqual((client.starts, client.stops, client.running), (1, 1, False))

    def test_client_started_by_the_source_but_not_given_has_its_tools_registered(self) -> None:
        # Prepare
        client = FakeMcpClient("shout")
        client.start()
        agent = FakeAgent()

        # Act
        tools, running = run_forms(agent, [client])

        # Assess
        self.assertEqual(tools, ["shout"])
        self.assertEqual(running, [True])
        self.assertEqual((client.starts, client.stops, client.running), (1, 1, False))

    def test_client_given_to_agent_but_not_returned_is_released_by_agent_cleanup(self) -> None:
        # Prepare
        client = FakeMcpClient("shout")
        agent = FakeAgent([client])

        # Act
        tools, _running = run_forms(agent, [])

        # Assess
        self.assertEqual(tools, ["shout"])
        self.assertEqual((client.starts, client.stops, client.running), (1, 1, False))

    def test_client_the_source_closed_after_listing_is_reopened_for_the_run(self) -> None:
        # Prepare: `with client: tools = client.list_tools_sync()` inside create_agent
        client = FakeMcpClient("shout")
        client.start()
        agent = FakeAgent(runner._listed_tools(client))
        client.stop(None, None, None)

        # Act
        tools, running = run_forms(agent, [client])

        # Assess
        self.assertEqual(tools, ["shout"])
        self.assertEqual(running, [True])
        self.assertEqual((client.starts, client.running), (2, False))

    def test_context_managers_of_plain_agents_are_entered_and_exited(self) -> None:
        # Prepare
        events = []

        class Plain:
            def __enter__(self):
                events.append("enter")
                return self

            def __exit__(self, *exc):
                events.append("exit")
                return False

        class PlainAgent:
            messages: list = []

        to_stop: list = []
        entered: list = []

        # Act
        runner.open_clients(PlainAgent(), [Plain()], to_stop, entered)
        during = list(events)
        runner.close_clients(PlainAgent(), to_stop, entered)

        # Assess
        self.assertEqual(during, ["enter"])
        self.assertEqual(events, ["enter", "exit"])
        self.assertEqual(to_stop, [])

    def test_a_failure_half_way_still_releases_what_was_opened(self) -> None:
        # Prepare: the second client fails to start
        first = FakeMcpClient("shout")
        second = FakeMcpClient("whisper")

        def refuse():
            raise ConnectionError("server unreachable")

        second.start = refuse
        agent = FakeAgent()
        to_stop: list = []
        entered: list = []

        # Act
        with self.assertRaises(ConnectionError):
            runner.open_clients(agent, [first, second], to_stop, entered)
        runner.close_clients(agent, to_stop, entered)

        # Assess
        self.assertEqual((first.starts, first.stops, first.running), (1, 1, False))


def encoded(value):
    """What the event pipe carries for `value` (the Emitter's JSON encoding), decoded again."""
    read_end, write_end = os.pipe()
    try:
        runner.Emitter(write_end).emit({"type": "messages", "messages": value})
        os.close(write_end)
        return json.loads(runner._read_all(read_end))["messages"]
    finally:
        os.close(read_end)


TOOL_TURN = [
    {"role": "user", "content": [{"text": "what is on the picture?"}]},
    {"role": "assistant",
     "content": [{"toolUse": {"toolUseId": "t1", "name": "look", "input": {"zoom": 2}}}],
     "metadata": {"usage": {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}}},
    {"role": "user", "content": [{"toolResult": {
        "toolUseId": "t1", "status": "success",
        "content": [{"text": "a cat"}, {"json": {"score": 0.9}},
                    {"image": {"format": "png", "source": {"bytes": b"\x89PNG\r\n\x00\xff"}}}]}}]},
    {"role": "assistant", "content": [{"text": "A cat."}]},
]


class MessagesTest(unittest.TestCase):
    def test_tool_blocks_and_bytes_survive_the_round_trip_through_the_event_pipe(self) -> None:
        # Act
        restored = runner._normalise_messages(encoded(TOOL_TURN))

        # Assess
        self.assertEqual(restored, TOOL_TURN)

    def test_string_content_and_missing_roles_are_normalised(self) -> None:
        restored = runner._normalise_messages([{"content": "hi"}, "junk", {"role": "assistant"}])
        self.assertEqual(restored, [{"role": "user", "content": [{"text": "hi"}]},
                                    {"role": "assistant", "content": []}])

    def test_a_bytes_marker_that_is_not_base64_is_kept(self) -> None:
        blocks = [{"text": "x", "data": {"bytes_b64": "not base64!"}}]
        restored = runner._normalise_messages([{"role": "user", "content": blocks}])
        self.assertEqual(restored[0]["content"], blocks)


# Checks the types it was given (bytes are bytes again) and adds one turn.
TOOL_HISTORY_AGENT = '''import json


class Checks:
    def __init__(self):
        self.messages = []

    async def stream_async(self, prompt):
        result = self.messages[2]["content"][0]["toolResult"]
        picture = result["content"][2]["image"]["source"]["bytes"]
        yield {"data": type(picture).__name__ + " " + str(len(picture)) + " " + self.messages[1]["content"][0]["toolUse"]["name"]}
        self.messages.append({"role": "user", "content": [{"text": prompt}]})
        self.messages.append({"role": "assistant", "content": [{"text": "ok"}]})


def create_agent():
    return Checks(), []
'''


class MessagesThroughTheRuntimeTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls.server = RuntimeServer()

    @classmethod
    def tearDownClass(cls) -> None:
        cls.server.stop()

    def test_the_stored_tool_turn_is_restored_into_agent_messages_and_emitted_again(self) -> None:
        # Prepare: the conversation as the platform stores it (the runtime's own JSON encoding)
        history = encoded(TOOL_TURN)

        # Act
        events = self.server.agent(TOOL_HISTORY_AGENT, "and then?", messages=history)

        # Assess
        self.assertIsNone(error_of(events))
        self.assertEqual(text_of(events), "bytes 8 look")
        emitted = of_type(events, "messages")[0]["messages"]
        self.assertEqual(emitted[:4], history)
        self.assertEqual(emitted[2]["content"][0]["toolResult"]["content"][2]["image"]["source"]["bytes"],
                         {"bytes_b64": base64.b64encode(b"\x89PNG\r\n\x00\xff").decode("ascii")})
        self.assertEqual(len(emitted), 6)


if __name__ == "__main__":
    unittest.main()
