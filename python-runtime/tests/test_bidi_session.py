"""The voice session process (platform_runtime.bidi_session): it imports the voice framework and
says so before it reads its session, so that the platform can start it ahead of a call, and a
framework whose import loads ctypes (Strands does, through OpenTelemetry) works under the sandbox
that refuses ctypes afterwards."""

from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import unittest

from .support import RUNTIME_DIR, fixture

# A stand-in for the framework's package, at the name the session preloads: its import loads a
# shared library through ctypes, which the sandbox's audit hook refuses once installed.
FAKE_BIDI = '''import ctypes

ctypes.CDLL(None)


class BidiAgent:
    def __init__(self, reply):
        self.reply = reply
        self.queue = []

    async def start(self):
        pass

    async def send(self, message):
        self.queue.append(message)

    async def receive(self):
        from asyncio import sleep
        while True:
            while self.queue:
                yield {"type": "bidi_transcript_stream", "role": "assistant",
                       "text": self.reply + self.queue.pop(0), "is_final": True}
            await sleep(0.01)

    async def stop(self):
        pass
'''

AGENT_ON_FAKE_FRAMEWORK = '''from strands.experimental.bidi import BidiAgent


def create_bidi_agent():
    return BidiAgent("framework: ")
'''


class Session:
    """One bidi_session process, its stdin kept open until `end()`."""

    def __init__(self, pythonpath: list[str]) -> None:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([RUNTIME_DIR, *pythonpath])
        self.proc = subprocess.Popen([sys.executable, "-m", "platform_runtime.bidi_session"], cwd=RUNTIME_DIR,
                                     env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL)
        self.buffer = b""

    def line(self, timeout: float = 60) -> dict:
        while b"\n" not in self.buffer:
            ready, _, _ = select.select([self.proc.stdout], [], [], timeout)
            if not ready:
                raise AssertionError("no line from the session process in time")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise AssertionError(f"the session process ended; before: {self.buffer!r}")
            self.buffer += chunk
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def until(self, kind: str) -> list[dict]:
        seen = [self.line()]
        while seen[-1]["type"] not in (kind, "end"):
            seen.append(self.line())
        return seen

    def write(self, message: dict) -> None:
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def end(self) -> list[dict]:
        self.proc.stdin.close()
        rest = self.until("end")
        self.proc.wait(timeout=30)
        return rest

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            if not stream.closed:
                stream.close()


def session_line(source: str, read_roots: list[str]) -> dict:
    return {"source": source, "env": {}, "allowHosts": [], "memoryMb": 1024, "maxSeconds": 60,
            "voice": "voice_1", "initialPrompt": None, "readRoots": read_roots}


class BidiSessionTest(unittest.TestCase):
    def setUp(self) -> None:
        self.site = tempfile.mkdtemp(prefix="bidi-site-")
        self.addCleanup(shutil.rmtree, self.site, True)

    def start(self, pythonpath: list[str]) -> Session:
        session = Session(pythonpath)
        self.addCleanup(session.kill)
        return session

    def test_says_it_is_waiting_before_it_has_a_session_then_runs_the_one_it_is_given(self) -> None:
        # Prepare
        session = self.start([])

        # Act: nothing is written until the process says it waits
        waiting = session.line()
        session.write(session_line(fixture("bidi_echo_agent.py"), []))
        started = session.until("started")
        session.write({"type": "text", "text": "hello"})
        answer = session.until("responseComplete")
        rest = session.end()

        # Assess
        self.assertEqual(waiting, {"type": "waiting"})
        self.assertEqual([event["type"] for event in started], ["sandbox", "started"])
        self.assertIn({"type": "transcript", "text": "echo: hello", "role": "assistant", "isFinal": True}, answer)
        self.assertEqual(rest[-1], {"type": "end"})
        self.assertEqual(session.proc.returncode, 0)

    def test_a_framework_whose_import_loads_ctypes_is_imported_before_the_sandbox(self) -> None:
        # Prepare: the framework's package where the session looks for it
        package = os.path.join(self.site, "strands", "experimental", "bidi")
        os.makedirs(package)
        for directory in (os.path.join(self.site, "strands"), os.path.dirname(package)):
            with open(os.path.join(directory, "__init__.py"), "w", encoding="utf-8"):
                pass
        with open(os.path.join(package, "__init__.py"), "w", encoding="utf-8") as fh:
            fh.write(FAKE_BIDI)
        session = self.start([self.site])

        # Act
        session.line()
        session.write(session_line(AGENT_ON_FAKE_FRAMEWORK, [self.site]))
        started = session.until("started")
        session.write({"type": "text", "text": "hi"})
        answer = session.until("transcript")
        session.end()

        # Assess
        self.assertEqual(started[-1], {"type": "started"}, started)
        self.assertEqual(answer[-1], {"type": "transcript", "text": "framework: hi", "role": "assistant", "isFinal": True})


if __name__ == "__main__":
    unittest.main()
