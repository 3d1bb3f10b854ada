"""Runs one invocation inside the forked child: installs the sandbox, loads the user source,
drives the agent or the action handler, and writes newline-delimited JSON events to the
event pipe. The parent (server.py) adds the `start` and `end` events, turns a killed or
crashed child into an error event, and admits from the child only the error codes of user-code
failures it names here (AGENT_EXECUTION_FAILED, AWS_CREDENTIALS_REQUIRED, HANDLER_ERROR,
HANDLER_NOT_FOUND, INVALID_HANDLER_RESULT), plus SANDBOX_UNAVAILABLE / INTERNAL_ERROR before the
`sandbox` event. A MemoryError is reported by the exit status EXIT_MEMORY, not by an event.

Events written here:
  {"type":"text","data"}                                   agent text delta
  {"type":"tool","name","toolUseId"}                       a tool starts (once per toolUseId)
  {"type":"metrics","totalCycles","totalTokens","inputTokens","outputTokens","toolsUsed","durationMs"}
  {"type":"messages","messages"}                           conversation after the run: the
                                                           framework's whole message list (tool
                                                           blocks too; bytes as {"bytes_b64"})
  {"type":"result","statusCode","body"[,"headers"]}        action result
  {"type":"log","stream","data"}                           what user code printed
  {"type":"error","code","message"[,"line","errorType"]}
  {"type":"sandbox", ...}                                  layers installed (folded into "end");
                                                           user code runs only after it
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
import sys
import threading
import time
import types

from . import platform_calls, policy, sandbox

EXIT_OK = 0
EXIT_ERROR = 1  # an error event was written
EXIT_MEMORY = 3  # a MemoryError: the parent reports MEMORY_LIMIT_EXCEEDED (no event is written)
EXIT_INTERNAL = 70

_MAX_MESSAGE = 2000
_MAX_LOG_BYTES = 1024 * 1024


class Emitter:
    """Writes one JSON object per line to the event pipe. Holds its own references to the
    functions it needs, so user code that monkeypatches json or os in this process cannot
    change how events are framed (it can only affect its own run anyway)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._write = os.write
        self._dumps = json.dumps
        self._lock = threading.Lock()
        self.errors = 0

    def emit(self, event: dict) -> None:
        try:
            line = self._dumps(event, ensure_ascii=False, separators=(",", ":"),
                               default=_json_default)
        except (TypeError, ValueError, RecursionError) as exc:
            line = self._dumps({"type": "error", "code": "INTERNAL_ERROR",
                                "message": f"event could not be encoded: {type(exc).__name__}"})
        data = (line + "\n").encode("utf-8", "replace")
        with self._lock:
            view = memoryview(data)
            while view:
                try:
                    n = self._write(self._fd, view)
                except InterruptedError:
                    continue
                except OSError:
                    return  # parent went away; nothing to report to
                view = view[n:]
        if event.get("type") == "error":
            self.errors += 1


def _json_default(value):
    import base64

    if isinstance(value, (bytes, bytearray)):
        return {"bytes_b64": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if hasattr(value, "isoformat"):
        try:
            return value.isoformat()
        except Exception:
            pass
    return repr(value)


class _LogStream:
    """sys.stdout / sys.stderr of user code: each line becomes a `log` event."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, emitter: Emitter, stream: str, budget: list[int]) -> None:
        self._emitter = emitter
        self._stream = stream
        self._buf = ""
        self._budget = budget

    def write(self, text) -> int:
        if not isinstance(text, str):
            text = str(text)
        self._buf += text
        while "\n" in self._buf:
            line, self._buf = self._buf.split("\n", 1)
            self._send(line)
        if len(self._buf) > 8192:
            self._send(self._buf)
            self._buf = ""
        return len(text)

    def flush(self) -> None:
        if self._buf:
            self._send(self._buf)
            self._buf = ""

    def _send(self, line: str) -> None:
        if self._budget[0] <= 0:
            return
        self._budget[0] -= len(line)
        if self._budget[0] <= 0:
            line = "[log output truncated]"
        self._emitter.emit({"type": "log", "stream": self._stream, "data": line})

    def isatty(self) -> bool:
        return False

    def writable(self) -> bool:
        return True


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------

def _exception_chain(exc: BaseException):
    seen = set()
    while exc is not None and id(exc) not in seen and len(seen) < 20:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__


def _user_line(exc: BaseException) -> int | None:
    tb = exc.__traceback__
    line = None
    hops = 0
    while tb is not None and hops < 1000:
        if tb.tb_frame.f_code.co_filename == policy.USER_FILENAME:
            line = tb.tb_lineno
        tb = tb.tb_next
        hops += 1
    if line is None and isinstance(exc, SyntaxError) and exc.filename == policy.USER_FILENAME:
        line = exc.lineno
    return line


def _describe(exc: BaseException) -> str:
    try:
        text = str(exc)
    except Exception:
        text = ""
    name = type(exc).__name__
    message = f"{name}: {text}" if text else name
    if "[sandbox:" not in message:
        # Libraries wrap errors (botocore: EndpointConnectionError); name the sandbox reason.
        for cause in list(_exception_chain(exc))[1:]:
            try:
                cause_text = str(cause)
            except Exception:
                continue
            if "[sandbox:" in cause_text:
                message += f" (caused by {type(cause).__name__}: {cause_text})"
                break
    if len(message) > _MAX_MESSAGE:
        message = message[:_MAX_MESSAGE] + "..."
    return message


def _is_memory_error(exc: BaseException) -> bool:
    return any(isinstance(e, MemoryError) for e in _exception_chain(exc))


def _is_missing_credentials(exc: BaseException) -> bool:
    for e in _exception_chain(exc):
        if type(e).__name__ in ("NoCredentialsError", "PartialCredentialsError"):
            return True
        try:
            text = str(e)
        except Exception:
            text = ""
        if "Unable to locate credentials" in text:
            return True
    return False


def _error_event(code: str, exc: BaseException | None = None, message: str | None = None) -> dict:
    event = {"type": "error", "code": code,
             "message": message if message is not None else _describe(exc)}
    if exc is not None:
        event["errorType"] = type(exc).__name__
        line = _user_line(exc)
        if line is not None:
            event["line"] = line
    return event


# --------------------------------------------------------------------------------------
# loading user code
# --------------------------------------------------------------------------------------

def new_user_module(kind: str) -> types.ModuleType:
    """The module user code will run in. Created before the sandbox, which recognises user
    frames by these globals."""
    return types.ModuleType("agent_source" if kind == "agent" else "action_source")


def load_user_module(source: str, module: types.ModuleType) -> types.ModuleType:
    code = compile(source, policy.USER_FILENAME, "exec", dont_inherit=True)
    module_name = module.__name__
    module.__dict__["__builtins__"] = sandbox.user_builtins()
    # User code cannot import os, so the owner's keys are also handed over as a global
    # (a JSON string, exactly like the SVC_KEYS_JSON environment variable).
    module.__dict__["SVC_KEYS_JSON"] = os.environ.get("SVC_KEYS_JSON", "{}")
    # The platform's own MCP server (knowledge, actions, skills, hosted servers); the egress proxy
    # adds the run's credential to calls to it, so the source holds no secret.
    module.__dict__["SVC_PLATFORM_MCP_URL"] = os.environ.get("SVC_PLATFORM_MCP_URL", "")
    sys.modules[module_name] = module
    exec(code, module.__dict__)
    return module


# --------------------------------------------------------------------------------------
# agents
# --------------------------------------------------------------------------------------

def _normalise_messages(messages) -> list:
    """The stored conversation as the framework's message list. Messages and their content
    blocks are kept as the framework wrote them (text, toolUse, toolResult, images; Strands'
    per-message `metadata`), only bytes come back from their JSON form."""
    out = []
    for m in messages or []:
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        if isinstance(content, str):
            content = [{"text": content}]
        elif not isinstance(content, list):
            content = []
        message = {"role": m.get("role", "user"), "content": _restore_bytes(content)}
        for key, value in m.items():
            if key not in message:
                message[key] = _restore_bytes(value)
        out.append(message)
    return out


def _restore_bytes(value, depth: int = 0):
    """Undoes `_json_default`'s {"bytes_b64": ...} for bytes in content blocks (image and
    document sources, redacted reasoning), so a restored block is what the framework stored."""
    if depth > 64:
        return value
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get("bytes_b64"), str):
            import base64
            import binascii

            try:
                return base64.b64decode(value["bytes_b64"], validate=True)
            except (binascii.Error, ValueError):
                return value
        return {k: _restore_bytes(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore_bytes(v, depth + 1) for v in value]
    return value


def _get(obj, *names, default=None):
    for name in names:
        if isinstance(obj, dict):
            if name in obj:
                return obj[name]
        elif obj is not None and hasattr(obj, name):
            try:
                return getattr(obj, name)
            except Exception:
                continue
    return default


def _metrics_from_result(result, tools_seen: list[str], duration_ms: int) -> dict:
    metrics = _get(result, "metrics", default=None)
    if metrics is None and isinstance(result, dict):
        metrics = result
    usage = _get(metrics, "accumulated_usage", "accumulatedUsage", "usage", default=None) or {}
    tool_metrics = _get(metrics, "tool_metrics", "toolMetrics", default=None)
    tools: list[str] = []
    for name in tools_seen:
        if name not in tools:
            tools.append(name)
    if isinstance(tool_metrics, dict):
        for name in tool_metrics:
            if name not in tools:
                tools.append(str(name))
    listed = _get(metrics, "toolsUsed", "tools_used", default=None)
    if isinstance(listed, (list, tuple)):
        for name in listed:
            if str(name) not in tools:
                tools.append(str(name))

    def num(value) -> int:
        try:
            return int(value or 0)
        except (TypeError, ValueError):
            return 0

    input_tokens = num(_get(usage, "inputTokens", "input_tokens"))
    output_tokens = num(_get(usage, "outputTokens", "output_tokens"))
    total = num(_get(usage, "totalTokens", "total_tokens")) or num(
        _get(metrics, "totalTokens", "total_tokens")) or (input_tokens + output_tokens)
    return {
        "type": "metrics",
        "totalCycles": num(_get(metrics, "cycle_count", "cycleCount", "totalCycles", "total_cycles")),
        "totalTokens": total,
        "inputTokens": input_tokens,
        "outputTokens": output_tokens,
        "toolsUsed": tools,
        "durationMs": duration_ms,
    }


def _final_text(result) -> str:
    message = _get(result, "message", default=None)
    content = _get(message, "content", default=None)
    parts = []
    if isinstance(content, list):
        for block in content:
            text = _get(block, "text", default=None)
            if isinstance(text, str):
                parts.append(text)
    return "".join(parts)


def _is_tool_provider(client) -> bool:
    """A Strands tool provider (MCPClient): the agent's tool registry loads its tools, starts it
    and stops it when the agent is cleaned up."""
    return all(callable(getattr(client, name, None))
               for name in ("load_tools", "add_consumer", "remove_consumer", "start", "stop"))


def _session_running(client) -> bool:
    # The check MCPClient.start() itself makes before refusing with "the client session is
    # currently running"; Strands has no public name for it.
    check = getattr(client, "_is_session_active", None)
    try:
        return bool(check()) if callable(check) else False
    except Exception:
        return False


def _registered_tools(agent) -> list:
    registry = getattr(getattr(agent, "tool_registry", None), "registry", None)
    return list(registry.values()) if isinstance(registry, dict) else []


def _listed_tools(client) -> list:
    """Every tool of a running client, all pages, with its own prefix and filters."""
    tools: list = []
    token = None
    while True:
        page = client.list_tools_sync(token)
        tools.extend(page)
        token = getattr(page, "pagination_token", None)
        if token is None:
            return tools


def open_clients(agent, clients: list, to_stop: list, entered: list) -> None:
    """Makes the returned MCP clients usable by the agent, whichever way the source wrote them,
    adding to `to_stop` the clients to stop at the end and to `entered` the context managers to
    exit (as it goes, so a failure half-way still releases what was opened).

    Strands clients: one the agent already has tools of (`Agent(tools=[client])`, or
    `client.start()` + `tools=client.list_tools_sync()`) is left as it is, or reopened when the
    source closed it; one the agent does not know is given to the agent's tool registry, which
    starts it and registers its tools, as `Agent(tools=[client])` would have. A client Strands
    already runs is never started again (start() refuses: "the client session is currently
    running"). Other objects (plain-Python agents) are entered as context managers."""
    registry = getattr(agent, "tool_registry", None)
    for client in clients:
        if not _is_tool_provider(client):
            if getattr(type(client), "__enter__", None) is not None:
                client.__enter__()
                entered.append(client)
            continue
        to_stop.append(client)
        running = _session_running(client)
        known = any(getattr(tool, "mcp_client", None) is client for tool in _registered_tools(agent))
        if known or not callable(getattr(registry, "process_tools", None)):
            if not running:
                client.start()
        elif running:
            registry.process_tools(_listed_tools(client))
        else:
            registry.process_tools([client])


def close_clients(agent, to_stop: list, entered: list) -> None:
    """Releases what the run holds: the agent's tool providers (agent.cleanup(), which stops the
    clients the registry started), then every returned client still running (the source handed
    them over and cannot stop them itself), then the context managers. Failures here change
    nothing about the run's outcome."""
    cleanup = getattr(agent, "cleanup", None)
    if callable(cleanup):
        try:
            cleanup()
        except Exception:
            pass
    for client in reversed(to_stop):
        if _session_running(client):
            try:
                client.stop(None, None, None)
            except Exception:
                pass
    for client in reversed(entered):
        try:
            client.__exit__(None, None, None)
        except Exception:
            pass


def run_agent(request: dict, emitter: Emitter, module: types.ModuleType) -> int:
    module = load_user_module(request["source"], module)
    factory = module.__dict__.get("create_agent")
    if not callable(factory):
        emitter.emit(_error_event("AGENT_EXECUTION_FAILED",
                                  message="the source does not define create_agent()"))
        return EXIT_ERROR
    created = factory()
    if isinstance(created, (tuple, list)) and len(created) == 2:
        agent, clients = created
    else:
        agent, clients = created, []
    clients = list(clients or [])
    to_stop: list = []
    entered: list = []
    try:
        open_clients(agent, clients, to_stop, entered)
        history = _normalise_messages(request.get("messages"))
        try:
            agent.messages = list(history)
        except AttributeError:
            pass
        prompt = request.get("prompt", "")
        started = time.monotonic()
        state = {"text": [], "tools": [], "tool_ids": set(), "metrics": None, "last_key": None}

        def handle(event) -> None:
            if not isinstance(event, dict):
                return
            data = event.get("data")
            if isinstance(data, str) and data:
                state["text"].append(data)
                emitter.emit({"type": "text", "data": data})
            tool = event.get("current_tool_use")
            if isinstance(tool, dict) and tool.get("name"):
                # Strands repeats current_tool_use while the tool input streams in: one
                # `tool` event per toolUseId (per consecutive run of a name without an id).
                tool_id = tool.get("toolUseId")
                key = ("id", str(tool_id)) if tool_id else ("name", str(tool["name"]))
                fresh = key not in state["tool_ids"] if tool_id else key != state["last_key"]
                state["last_key"] = key
                if fresh:
                    state["tool_ids"].add(key)
                    state["tools"].append(str(tool["name"]))
                    emitter.emit({"type": "tool", "name": str(tool["name"]),
                                  "toolUseId": str(tool_id) if tool_id else None})
            if "result" in event:
                result = event["result"]
                if not state["text"]:
                    text = _final_text(result)
                    if text:
                        state["text"].append(text)
                        emitter.emit({"type": "text", "data": text})
                state["metrics"] = _metrics_from_result(
                    result, state["tools"], int((time.monotonic() - started) * 1000))

        async def drive() -> None:
            stream = agent.stream_async(prompt)
            if inspect.isawaitable(stream) and not hasattr(stream, "__aiter__"):
                stream = await stream
            async for event in stream:
                handle(event)

        asyncio.run(drive())
        duration = int((time.monotonic() - started) * 1000)
        emitter.emit(state["metrics"] or _metrics_from_result(None, state["tools"], duration))
        after = getattr(agent, "messages", None)
        if isinstance(after, list) and len(after) > len(history):
            messages = after
        else:
            # The agent did not keep a history: record this turn ourselves.
            messages = history + [
                {"role": "user", "content": [{"text": prompt}]},
                {"role": "assistant", "content": [{"text": "".join(state["text"])}]},
            ]
        emitter.emit({"type": "messages", "messages": messages})
        return EXIT_OK
    finally:
        close_clients(agent, to_stop, entered)


# --------------------------------------------------------------------------------------
# actions
# --------------------------------------------------------------------------------------

class LambdaContext:
    """The `context` argument of an action handler (a subset of AWS Lambda's)."""

    def __init__(self, request_id: str, function_name: str, memory_mb: int, deadline: float) -> None:
        self.aws_request_id = request_id
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.memory_limit_in_mb = int(memory_mb)
        self.deadline = deadline

    def get_remaining_time_in_millis(self) -> int:
        return max(0, int((self.deadline - time.monotonic()) * 1000))


def run_action(request: dict, emitter: Emitter, module: types.ModuleType) -> int:
    module = load_user_module(request["source"], module)
    handler = module.__dict__.get("handler")
    if not callable(handler):
        emitter.emit(_error_event("HANDLER_NOT_FOUND",
                                  message="the source does not define handler(event, context)"))
        return EXIT_ERROR
    event = request.get("event")
    event = dict(event) if isinstance(event, dict) else {}
    if "keys" not in event:
        try:
            keys = json.loads(os.environ.get("SVC_KEYS_JSON") or "{}")
        except ValueError:
            keys = {}
        event["keys"] = keys if isinstance(keys, dict) else {}
    context = LambdaContext(request.get("requestId", ""), request.get("functionName", ""),
                            request.get("memoryMb", 128), request["deadline"])
    result = handler(event, context)
    if inspect.isawaitable(result):
        async def wait():
            return await result
        result = asyncio.run(wait())
    if not isinstance(result, dict) or "statusCode" not in result:
        emitter.emit(_error_event(
            "INVALID_HANDLER_RESULT",
            message=f"handler must return a dict with statusCode and body; got {type(result).__name__}"
                    + ("" if not isinstance(result, dict) else " without statusCode")))
        return EXIT_ERROR
    status = result.get("statusCode")
    if isinstance(status, bool) or not isinstance(status, int):
        emitter.emit(_error_event("INVALID_HANDLER_RESULT",
                                  message="statusCode must be an integer"))
        return EXIT_ERROR
    out = {"type": "result", "statusCode": status, "body": result.get("body")}
    if isinstance(result.get("headers"), dict):
        out["headers"] = result["headers"]
    try:
        json.dumps(out)
    except (TypeError, ValueError) as exc:
        emitter.emit(_error_event("INVALID_HANDLER_RESULT",
                                  message=f"body is not JSON serializable: {exc}"))
        return EXIT_ERROR
    emitter.emit(out)
    return EXIT_OK


# --------------------------------------------------------------------------------------
# child entry point
# --------------------------------------------------------------------------------------

def _read_all(fd: int) -> bytes:
    chunks = []
    while True:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def _prepare_process(keep: list[int]) -> None:
    devnull = os.open(os.devnull, os.O_RDWR)
    for target in (0, 1, 2):
        if devnull != target:
            os.dup2(devnull, target)
    if devnull > 2:
        os.close(devnull)
    start = 3
    for fd in sorted(keep):
        if fd >= start:
            os.closerange(start, fd)
            start = fd + 1
    os.closerange(start, max(start, os.sysconf("SC_OPEN_MAX")))


PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
NO_PROXY_VARIABLES = ("NO_PROXY", "no_proxy")


def _child_env(env: dict, proxy_url: str | None) -> None:
    import posix

    os.environ.clear()
    posix.environ.clear()
    for key, value in (env or {}).items():
        if isinstance(key, str) and isinstance(value, str) and key and "=" not in key and "\0" not in value:
            os.environ[key] = value
    if proxy_url:
        # Clients that honour the environment (httpx, urllib, botocore) send everything through
        # the proxy; nothing is exempt, whatever `env` said.
        for key in PROXY_VARIABLES:
            os.environ[key] = proxy_url
        for key in NO_PROXY_VARIABLES:
            os.environ[key] = ""
    os.environ.setdefault("HOME", "/nonexistent")
    os.environ.setdefault("AWS_EC2_METADATA_DISABLED", "true")
    os.environ.setdefault("AWS_CONFIG_FILE", "/nonexistent/aws-config")
    os.environ.setdefault("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent/aws-credentials")
    os.environ.setdefault("LANG", "C.UTF-8")


def proxy_address(url: str | None) -> str | None:
    """"host:port" of the egress proxy URL (validated by the server), for the network policy."""
    if not url:
        return None
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    host = f"[{parts.hostname}]" if ":" in (parts.hostname or "") else parts.hostname
    return f"{host}:{parts.port}"


def child_main(request_fd: int, event_fd: int, server_config: dict) -> int:
    """Entry point of the forked child. Returns the process exit status."""
    _prepare_process([request_fd, event_fd])
    emitter = Emitter(event_fd)
    try:
        raw = _read_all(request_fd)
        os.close(request_fd)
        request = json.loads(raw.decode("utf-8"))
    except Exception as exc:
        emitter.emit({"type": "error", "code": "INTERNAL_ERROR",
                      "message": f"invalid invocation request: {type(exc).__name__}"})
        return EXIT_INTERNAL
    kind = request.get("kind")
    failure_code = "AGENT_EXECUTION_FAILED" if kind == "agent" else "HANDLER_ERROR"
    try:
        os.chdir("/")
        proxy_url = request.get("egressProxy")
        _child_env(request.get("env") or {}, proxy_url)
        calls = request.get("platformCalls") or {}
        # Before the sandbox: it imports httpx (when installed) to patch it.
        platform_calls.install(list(calls.get("hosts") or []), dict(calls.get("headers") or {}))
        module = new_user_module(kind)
        report = sandbox.install(
            memory_mb=int(request["memoryMb"]),
            timeout_ms=int(request["timeoutMs"]),
            read_roots=server_config["readRoots"],
            allow_hosts=list(request.get("allowHosts") or []),
            user_globals=module.__dict__,
            proxy=proxy_address(proxy_url),
            require_seccomp=bool(server_config.get("requireSeccomp")),
        )
    except Exception as exc:
        emitter.emit({"type": "error", "code": "SANDBOX_UNAVAILABLE", "message": _describe(exc)})
        return EXIT_INTERNAL
    emitter.emit({"type": "sandbox", **report})
    budget = [_MAX_LOG_BYTES]
    sys.stdout = _LogStream(emitter, "stdout", budget)
    sys.stderr = _LogStream(emitter, "stderr", budget)
    run = run_agent if kind == "agent" else run_action
    return run_guarded(lambda: run(request, emitter, module), kind, failure_code, emitter)


def run_guarded(run, kind: str, failure_code: str, emitter: Emitter) -> int:
    """Runs user code and returns the exit status: a failure is reported as an event, never
    re-raised, and what the code printed is flushed either way."""
    try:
        return run()
    except BaseException as exc:  # user code: report, never re-raise
        try:
            return _report_failure(exc, kind, failure_code, emitter)
        except MemoryError:
            return EXIT_MEMORY
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except Exception:
            pass


def _report_failure(exc: BaseException, kind: str, failure_code: str, emitter: Emitter) -> int:
    if _is_memory_error(exc):
        return EXIT_MEMORY  # the parent names the outcome: a child may not claim codes
    if kind == "agent" and _is_missing_credentials(exc):
        emitter.emit(_error_event("AWS_CREDENTIALS_REQUIRED", exc,
                                  message="AWS credentials are required to call the model "
                                          "provider; none are configured (" + _describe(exc) + ")"))
        return EXIT_ERROR
    if isinstance(exc, SystemExit):
        emitter.emit(_error_event(failure_code, exc,
                                  message=f"user code called exit ({exc.code!r})"))
        return EXIT_ERROR
    if isinstance(exc, KeyboardInterrupt):
        emitter.emit(_error_event(failure_code, exc, message="interrupted"))
        return EXIT_ERROR
    emitter.emit(_error_event(failure_code, exc))
    return EXIT_ERROR
