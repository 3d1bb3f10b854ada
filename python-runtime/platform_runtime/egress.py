"""The egress forwarder: a TCP port on 127.0.0.1 whose connections are relayed, byte for byte
in both directions, to a Unix socket (the platform's HTTP proxy).

Why: in the OS sandbox the runtime has its own network namespace and no network; the platform
bind-mounts the proxy's Unix socket into it. HTTP clients (httpx, urllib, botocore) speak to a
proxy over TCP only, so runs get `HTTP_PROXY=http://...@127.0.0.1:<port>` and this process
carries the bytes. It reads nothing of what it relays: the proxy authenticates each run and
decides where it may go.

Each connection takes two threads, one per direction, each with one bounded buffer (sendall
blocks while the other side is slow, so memory does not grow). End of stream in one direction
is passed on as a half-close; an error in either direction closes both sockets.
"""

from __future__ import annotations

import os
import socket
import threading

CHUNK_BYTES = 64 * 1024
MAX_CONNECTIONS = 256
CONNECT_TIMEOUT_S = 10.0
ACCEPT_RETRY_S = 0.1


class EgressForwarder:
    def __init__(self, target_path: str, host: str = "127.0.0.1",
                 max_connections: int = MAX_CONNECTIONS) -> None:
        self.target_path = target_path
        self._listener = socket.create_server((host, 0))
        self.port: int = self._listener.getsockname()[1]
        self._slots = threading.BoundedSemaphore(max_connections)
        self._lifeline: int | None = None
        self._closed = threading.Event()

    def start(self) -> None:
        threading.Thread(target=self._accept_loop, daemon=True, name="egress-accept").start()

    def start_in_child_process(self) -> None:
        """Serves from a forked process of its own, for a process about to sandbox itself (a voice
        session): the sandbox's audit hook refuses Unix socket connects in every thread of the
        process that installs it, so a forwarder thread there could never reach the proxy. Call it
        before any thread starts. The child ends when this process does: its end of a pipe closes."""
        read_end, write_end = os.pipe()
        if os.fork() == 0:
            try:
                os.close(write_end)
                # The session's stdin and event stream are not the forwarder's: holding them would
                # delay the end-of-stream the platform waits for.
                devnull = os.open(os.devnull, os.O_RDWR)
                for fd in (0, 1, 2):
                    os.dup2(devnull, fd)
                self.start()
                while os.read(read_end, 1):
                    pass
            finally:
                os._exit(0)
        os.close(read_end)
        self._listener.close()  # the child accepts; close() here would shut its socket down too
        self._lifeline = write_end

    def close(self) -> None:
        self._closed.set()
        try:
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes the blocked accept()
        except OSError:
            pass
        self._listener.close()

    def _accept_loop(self) -> None:
        while not self._closed.is_set():
            try:
                client, _addr = self._listener.accept()
            except OSError:
                if self._closed.is_set():
                    return
                # Out of descriptors or similar: back off instead of spinning on the error.
                self._closed.wait(ACCEPT_RETRY_S)
                continue
            if not self._slots.acquire(blocking=False):
                client.close()  # at capacity: the client sees the connection closed
                continue
            threading.Thread(target=self._serve, args=(client,), daemon=True,
                             name="egress-connection").start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # streamed responses
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.settimeout(CONNECT_TIMEOUT_S)
            upstream.connect(self.target_path)
            upstream.settimeout(None)
            back = threading.Thread(target=_pump, args=(upstream, client), daemon=True,
                                    name="egress-pump")
            back.start()
            _pump(client, upstream)
            back.join()
        except OSError:
            pass  # the proxy is not there: closing the client is the answer
        finally:
            _close(client)
            if upstream is not None:
                _close(upstream)
            self._slots.release()


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copies src to dst until src ends, then half-closes dst."""
    try:
        while True:
            data = src.recv(CHUNK_BYTES)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        # A reset on one side: the other direction cannot complete either; wake its pump.
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        return
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _close(sock: socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        pass
