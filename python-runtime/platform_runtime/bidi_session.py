"""One voice (bidi) session in its own process, started by the platform inside the OS sandbox:
installs the same layers as a run (runner.py, sandbox.py), loads the user source, calls
`create_bidi_agent()`, `await agent.start()`, feeds `agent.send(...)` from stdin, forwards
`agent.receive()` events to stdout, and `await agent.stop()` at the end.

    python3 -m platform_runtime.bidi_session [--egress-socket PATH] [--require-seccomp]

Before it reads its session the process imports the voice framework (`BIDI_MODULES`, with the
runtime's own preloads), then says `{"type":"waiting"}`: the framework's imports must happen before
the sandbox is installed (Strands' OpenTelemetry loads ctypes, which the audit hook refuses), and a
process that has done them and run no user code can be kept started ahead of need and given to
any tenant (functions/runtimes/bidi-local.ts keeps such spares), so a session waits for none of it.

stdin, one JSON object per line. The first is the session:
  {"source", "env", "allowHosts", "platformCalls", "egressCredential", "memoryMb",
   "maxSeconds", "voice", "initialPrompt", "readRoots"}
then {"type":"audio","audio":<base64 PCM16LE 16 kHz>}, {"type":"text","text"}, {"type":"end"};
end of file ends the session as {"type":"end"} does.

stdout, one JSON object per line:
  {"type":"waiting"}  preloaded, reading the session line
  {"type":"sandbox",...}  layers installed          {"type":"started"}  agent.start() returned
  {"type":"audio","audio","sampleRate"}             {"type":"transcript","text","role","isFinal"}
  {"type":"interruption"}  {"type":"responseComplete"}  {"type":"usage",...}  {"type":"tool","name"}
  {"type":"log","stream","data"}  {"type":"error","code","message"[,"line","errorType"]}
  {"type":"end"}  last line: the agent has stopped
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import sys

from . import platform_calls, runner, sandbox, zygote
from .egress import EgressForwarder

# What a voice agent imports beyond a run's preloads: Strands' bidi agent and its model classes.
# Those whose packages are not installed are skipped; a source importing one fails as it would anyway.
BIDI_MODULES = ["strands.experimental.bidi", "strands.experimental.bidi.models",
                "strands.experimental.bidi.models.nova_sonic",
                "strands.experimental.bidi.models.openai_realtime",
                "strands.experimental.bidi.models.gemini_live"]

# The voice identifiers of the platform (SPEC part 2) and the model's voices they stand for.
VOICES = {"voice_1": "tiffany", "voice_2": "matthew", "voice_3": "amy"}
INPUT_SAMPLE_RATE = 16000
OUTPUT_SAMPLE_RATE = 24000
_MAX_LINE = 4 * 1024 * 1024


def _read_first_line(fd: int) -> tuple[bytes, bytes]:
    """The session line, and whatever came after it in the same reads (it is not lost)."""
    buf = bytearray()
    while b"\n" not in buf:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        buf.extend(chunk)
        if len(buf) > _MAX_LINE:
            raise ValueError("the session line is too long")
    line, _, rest = bytes(buf).partition(b"\n")
    return line, rest


def _field(event, name, default=None):
    if isinstance(event, dict):
        return event.get(name, default)
    return getattr(event, name, default)


async def _maybe_await(value):
    if inspect.isawaitable(value):
        return await value
    return value


def translate(event, tools_seen: set) -> dict | None:
    """One `agent.receive()` event as a line for the platform; None for what it does not need."""
    kind = _field(event, "type")
    if kind == "bidi_audio_stream":
        audio = _field(event, "audio")
        if not isinstance(audio, str):
            return None
        rate = _field(event, "sample_rate", OUTPUT_SAMPLE_RATE)
        return {"type": "audio", "audio": audio, "sampleRate": int(rate or OUTPUT_SAMPLE_RATE)}
    if kind == "bidi_transcript_stream":
        return {"type": "transcript", "text": str(_field(event, "text", "") or ""),
                "role": str(_field(event, "role", "assistant") or "assistant"),
                "isFinal": bool(_field(event, "is_final", False))}
    if kind == "bidi_interruption":
        return {"type": "interruption"}
    if kind == "bidi_response_complete":
        return {"type": "responseComplete"}
    if kind == "bidi_usage":
        usage = {"type": "usage"}
        for source, target in (("input_tokens", "inputTokens"), ("output_tokens", "outputTokens"),
                               ("total_tokens", "totalTokens"), ("inputTokens", "inputTokens"),
                               ("outputTokens", "outputTokens"), ("totalTokens", "totalTokens")):
            value = _field(event, source)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                usage[target] = int(value)
        return usage
    if kind == "bidi_error":
        message = _field(event, "message") or _field(event, "error") or "the agent reported an error"
        return {"type": "error", "code": "AGENT_EXECUTION_FAILED", "message": str(message)[:2000]}
    if kind == "tool_use_stream":
        tool = _field(event, "current_tool_use") or {}
        name = _field(tool, "name")
        if not name:
            return None
        key = str(_field(tool, "toolUseId") or name)
        if key in tools_seen:
            return None
        tools_seen.add(key)
        return {"type": "tool", "name": str(name)}
    return None


async def run_session(agent, emitter: runner.Emitter, pending: bytes, initial_prompt: str | None) -> None:
    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue = asyncio.Queue()
    buf = bytearray()

    def take(data: bytes) -> None:
        buf.extend(data)
        while True:
            cut = buf.find(b"\n")
            if cut < 0:
                break
            line = bytes(buf[:cut])
            del buf[: cut + 1]
            if line.strip():
                try:
                    inbox.put_nowait(json.loads(line))
                except ValueError:
                    pass

    def on_readable() -> None:
        try:
            chunk = os.read(0, 1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            loop.remove_reader(0)
            inbox.put_nowait({"type": "end"})
            return
        take(chunk)

    take(pending)
    os.set_blocking(0, False)
    loop.add_reader(0, on_readable)

    await _maybe_await(agent.start())
    emitter.emit({"type": "started"})
    stopped = False
    try:
        if initial_prompt:
            # The agent speaks first: the instruction goes in as the session's first text.
            await _maybe_await(agent.send(initial_prompt))

        async def feed() -> None:
            while True:
                message = await inbox.get()
                kind = message.get("type") if isinstance(message, dict) else None
                if kind == "end":
                    return
                if kind == "audio" and isinstance(message.get("audio"), str):
                    await _maybe_await(agent.send({
                        "type": "bidi_audio_input", "audio": message["audio"], "format": "pcm",
                        "sample_rate": INPUT_SAMPLE_RATE, "channels": 1}))
                elif kind == "text" and isinstance(message.get("text"), str):
                    await _maybe_await(agent.send(message["text"]))

        async def forward() -> None:
            tools_seen: set = set()
            async for event in agent.receive():
                line = translate(event, tools_seen)
                if line is not None:
                    emitter.emit(line)

        feeding = asyncio.ensure_future(feed())
        forwarding = asyncio.ensure_future(forward())
        done, _ = await asyncio.wait({feeding, forwarding}, return_when=asyncio.FIRST_COMPLETED)
        # The caller ended (or the agent did): stop the agent, which ends its receive() too.
        stopped = True
        await _maybe_await(agent.stop())
        for task in (feeding, forwarding):
            if task not in done:
                task.cancel()
        for task in (feeding, forwarding):
            try:
                await task
            except asyncio.CancelledError:
                pass
    finally:
        if not stopped:
            try:
                await _maybe_await(agent.stop())
            except Exception:
                pass


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="platform_runtime.bidi_session")
    parser.add_argument("--egress-socket")
    parser.add_argument("--require-seccomp", action="store_true")
    args = parser.parse_args(argv)
    forwarder = None
    if args.egress_socket:
        forwarder = EgressForwarder(args.egress_socket)
        forwarder.start_in_child_process()
    # Events get a descriptor of their own; what user code prints goes through log events.
    events_fd = os.dup(1)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)
    emitter = runner.Emitter(events_fd)
    # After the forwarder's fork: imports may start threads, and a fork must not copy them.
    zygote.preload(BIDI_MODULES)
    emitter.emit({"type": "waiting"})
    try:
        line, pending = _read_first_line(0)
        config = json.loads(line.decode("utf-8"))
    except Exception as exc:
        emitter.emit({"type": "error", "code": "INTERNAL_ERROR", "message": f"invalid session: {type(exc).__name__}"})
        emitter.emit({"type": "end"})
        return runner.EXIT_INTERNAL
    try:
        os.chdir("/")
        proxy_url = None
        if forwarder is not None and config.get("egressCredential"):
            proxy_url = f"http://run:{config['egressCredential']}@127.0.0.1:{forwarder.port}"
        runner._child_env(config.get("env") or {}, proxy_url)
        calls = config.get("platformCalls") or {}
        platform_calls.install(list(calls.get("hosts") or []), dict(calls.get("headers") or {}))
        module = runner.new_user_module("agent")
        report = sandbox.install(
            memory_mb=int(config.get("memoryMb") or 1024),
            timeout_ms=int(config.get("maxSeconds") or 900) * 1000,
            read_roots=sandbox.default_read_roots(list(config.get("readRoots") or [])),
            allow_hosts=list(config.get("allowHosts") or []),
            user_globals=module.__dict__,
            proxy=runner.proxy_address(proxy_url),
            require_seccomp=args.require_seccomp,
        )
    except Exception as exc:
        emitter.emit({"type": "error", "code": "SANDBOX_UNAVAILABLE", "message": runner._describe(exc)})
        emitter.emit({"type": "end"})
        return runner.EXIT_INTERNAL
    emitter.emit({"type": "sandbox", **report})
    budget = [runner._MAX_LOG_BYTES]
    sys.stdout = runner._LogStream(emitter, "stdout", budget)
    sys.stderr = runner._LogStream(emitter, "stderr", budget)
    voice = str(config.get("voice") or "voice_1")
    # Like SVC_KEYS_JSON: user code cannot read the environment, so the session's voice (the
    # model's name for it) is a global of the module.
    module.__dict__["SVC_VOICE"] = VOICES.get(voice, VOICES["voice_1"])
    module.__dict__["SVC_VOICE_ID"] = voice

    def run() -> int:
        loaded = runner.load_user_module(config["source"], module)
        factory = loaded.__dict__.get("create_bidi_agent")
        if not callable(factory):
            emitter.emit(runner._error_event("AGENT_EXECUTION_FAILED",
                                             message="the source does not define create_bidi_agent()"))
            return runner.EXIT_ERROR
        created = factory()
        agent = created[0] if isinstance(created, (tuple, list)) else created
        asyncio.run(run_session(agent, emitter, pending, config.get("initialPrompt") or None))
        return runner.EXIT_OK

    code = runner.run_guarded(run, "agent", "AGENT_EXECUTION_FAILED", emitter)
    emitter.emit({"type": "end"})
    return code


if __name__ == "__main__":
    sys.exit(main())
