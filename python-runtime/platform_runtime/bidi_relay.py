"""A voice session handed to the runtime function (the cloud): `POST /bidi` on the runtime server
starts the session's process (`bidi_session`, which installs the sandbox layers itself) and relays
its JSON lines to and from the voice bridge over a WebSocket the runtime opens back to the bridge,
so the audio never passes through Lambda's request and response. The invocation lasts as long as
the call; Lambda's tenant isolation is the boundary between tenants, as for every run.

    POST /bidi  {"session": {... the bidi_session line ...}, "connect": {"url", "token"}}
    200         {"exitCode"}   once the call is over

Standard library only: a minimal RFC 6455 client (ws:// and wss://, text frames, ping, close).
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import socket
import ssl
import struct
import subprocess
import sys
import threading
from urllib.parse import urlsplit

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_MAX_FRAME = 8 * 1024 * 1024
_RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class WebSocketClient:
    def __init__(self, url: str, headers: dict[str, str], timeout: float = 10.0) -> None:
        parts = urlsplit(url)
        secure = parts.scheme == "wss"
        host = parts.hostname or "localhost"
        port = parts.port or (443 if secure else 80)
        sock = socket.create_connection((host, port), timeout=timeout)
        if secure:
            sock = ssl.create_default_context().wrap_socket(sock, server_hostname=host)
        key = base64.b64encode(os.urandom(16)).decode()
        path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        lines = [f"GET {path} HTTP/1.1", f"Host: {parts.netloc}", "Upgrade: websocket", "Connection: Upgrade",
                 f"Sec-WebSocket-Key: {key}", "Sec-WebSocket-Version: 13"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
        buf = b""
        while b"\r\n\r\n" not in buf:
            chunk = sock.recv(4096)
            if not chunk:
                raise ConnectionError("the bridge closed the connection during the handshake")
            buf += chunk
        head, _, rest = buf.partition(b"\r\n\r\n")
        status = head.split(b"\r\n", 1)[0]
        accept = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest())
        if b" 101" not in status or accept not in head:
            raise ConnectionError(f"the bridge refused the connection: {status.decode(errors='replace')}")
        sock.settimeout(None)
        self._sock = sock
        self._buf = bytearray(rest)
        self._lock = threading.Lock()
        self.closed = False

    def send_text(self, text: str) -> None:
        self._send(0x1, text.encode("utf-8"))

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            try:
                self._send(0x8, struct.pack(">H", 1000))
            except OSError:
                pass
        try:
            self._sock.close()
        except OSError:
            pass

    def _send(self, opcode: int, payload: bytes) -> None:
        n = len(payload)
        if n < 126:
            header = struct.pack(">BB", 0x80 | opcode, 0x80 | n)
        elif n < 65536:
            header = struct.pack(">BBH", 0x80 | opcode, 0x80 | 126, n)
        else:
            header = struct.pack(">BBQ", 0x80 | opcode, 0x80 | 127, n)
        mask = os.urandom(4)
        # Clients mask every frame (RFC 6455 5.3); one big-integer XOR instead of a loop per byte.
        stream = (mask * (n // 4 + 1))[:n]
        masked = (int.from_bytes(payload, "big") ^ int.from_bytes(stream, "big")).to_bytes(n, "big") if n else b""
        with self._lock:
            self._sock.sendall(header + mask + masked)

    def _read(self, n: int) -> bytes:
        while len(self._buf) < n:
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("the bridge closed the connection")
            self._buf.extend(chunk)
        out = bytes(self._buf[:n])
        del self._buf[:n]
        return out

    def recv(self) -> str | None:
        """The next text message, or None once the bridge closed."""
        message = bytearray()
        while True:
            first, second = self._read(2)
            opcode, length = first & 0x0F, second & 0x7F
            if length == 126:
                (length,) = struct.unpack(">H", self._read(2))
            elif length == 127:
                (length,) = struct.unpack(">Q", self._read(8))
            if length > _MAX_FRAME:
                raise ConnectionError("frame too large")
            payload = self._read(length)
            if opcode == 0x8:
                self.close()
                return None
            if opcode == 0x9:
                self._send(0xA, payload)
                continue
            if opcode in (0x0, 0x1, 0x2):
                message.extend(payload)
                if first & 0x80:
                    return message.decode("utf-8", errors="replace")


def relay(session: dict, connect: dict) -> dict:
    """Runs one session's process and relays its lines to and from the bridge until either ends."""
    ws = WebSocketClient(str(connect["url"]), {"Authorization": f"Bearer {connect['token']}"})
    child = subprocess.Popen([sys.executable, "-m", "platform_runtime.bidi_session"], cwd=_RUNTIME_DIR,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
                                  "PYTHONPATH": os.environ.get("PYTHONPATH", ""), "HOME": "/tmp"})
    child.stdin.write((json.dumps(session) + "\n").encode())
    child.stdin.flush()

    def upstream() -> None:
        try:
            for line in child.stdout:
                ws.send_text(line.decode("utf-8", errors="replace").rstrip("\n"))
        except OSError:
            pass
        finally:
            ws.close()

    sender = threading.Thread(target=upstream, daemon=True)
    sender.start()
    try:
        while True:
            message = ws.recv()
            if message is None:
                break
            child.stdin.write(message.encode("utf-8") + b"\n")
            child.stdin.flush()
    except (OSError, ValueError):
        pass
    finally:
        try:
            child.stdin.close()
        except OSError:
            pass
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
        sender.join(timeout=5)
        ws.close()
    return {"exitCode": child.returncode}
