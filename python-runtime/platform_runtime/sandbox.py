"""The runtime sandbox, installed in the forked invocation child before user code is loaded.

Layers, in the order `install()` applies them:
1. resource limits: RLIMIT_AS (the process's address space at install time plus memoryMb),
   RLIMIT_CPU (the timeout plus one second), RLIMIT_FSIZE 0 (no file can grow), RLIMIT_CORE 0;
2. seccomp-bpf (see seccomp.py): no exec/fork, no file creation or writes, no ptrace, kill only
   itself, no raising limits. Kernel-enforced; survives anything user code does in Python;
3. library patches that close unchecked eval paths (typing.ForwardRef, inspect.get_annotations)
   and keep logging working without frame access;
4. an import hook (a meta path finder) that refuses modules outside the allowlist when the
   import is started by user code, while library code keeps importing what it needs;
5. an audit hook (sys.addaudithook, PEP 578). Audit hooks cannot be removed, which is why they
   are only ever installed in the child. It denies: opening files for writing, reading outside
   the allowed roots (the Python installation, site-packages, the runtime directory and
   configured extras), listing directories outside them, file system changes, process
   creation (subprocess, os.system, os.exec*, os.spawn*, os.fork, os.posix_spawn, pty),
   signals to other processes, ctypes, raw/packet/netlink sockets, Unix socket connects, DNS
   lookups and connections to hosts not on the run's allow list, listening sockets, new
   audit hooks, tracing, frame and gc introspection from user code, code object
   construction, pickle loading, and compile/exec/marshal called directly by user code.
User code itself then runs with restricted builtins (`user_builtins()`): no eval, exec,
compile, open, input, breakpoint, globals, vars, dir...; `__import__` is the allowlist guard
and getattr/setattr/delattr refuse private and denied attribute names.

This is defence in depth inside one process. The real isolation boundary is the process and
what the OS grants it (separate runtime processes per tenant, an unprivileged user, the
network policy of the host); see README.md for the known limits.
"""

from __future__ import annotations

import builtins
import errno
import ipaddress
import math
import os
import resource
import signal
import socket
import sys
import threading
import types

from . import policy, seccomp

_O_WRITE = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_THIS_FILE = os.path.abspath(__file__)
_USER = policy.USER_FILENAME


class SandboxError(RuntimeError):
    pass


def _deny(message: str) -> BaseException:
    # With an errno, so that code re-raising OSError(err.errno, err.strerror) keeps the text.
    return PermissionError(errno.EPERM, f"[sandbox:audit] {message}")


# --------------------------------------------------------------------------------------
# allowed read roots
# --------------------------------------------------------------------------------------

def default_read_roots(extra: list[str] | None = None) -> list[str]:
    """Directories user code (and the libraries it calls) may read: the Python installation,
    site-packages, the runtime package and absolute sys.path entries (Lambda layers, for
    example), plus public system data (CA certificates, time zones)."""
    import site
    import sysconfig

    roots: set[str] = set()
    for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix):
        roots.add(p)
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            roots.add(sysconfig.get_paths()[key])
        except KeyError:
            pass
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except Exception:
        pass
    runtime_dir = os.path.dirname(os.path.dirname(_THIS_FILE))
    roots.add(runtime_dir)
    too_broad = {"/", "/tmp", "/home", "/root", "/etc", "/var", "/usr", os.path.expanduser("~")}
    for entry in sys.path:
        if entry and os.path.isabs(entry) and entry not in too_broad and os.path.exists(entry):
            roots.add(entry)
    for p in ("/etc/ssl", "/etc/pki", "/usr/share/ca-certificates", "/usr/lib/ssl",
              "/usr/share/zoneinfo", "/etc/localtime", "/dev/null", "/dev/urandom"):
        roots.add(p)
    roots.update(extra or [])
    result = set()
    for r in roots:
        if r and os.path.isabs(r):
            result.add(os.path.realpath(r))
    return sorted(result)


# --------------------------------------------------------------------------------------
# hosts
# --------------------------------------------------------------------------------------

class HostPolicy:
    """allowHosts entries: "host", "host:port", "*.example.com", "[::1]:443", "10.0.0.5".
    A connection is allowed to an IP literal on the list, or to an address that a listed
    host name resolved to during this run."""

    def __init__(self, entries: list[str]) -> None:
        self.rules: list[tuple[str, int | None]] = []
        for raw in entries or []:
            host, port = _split_host_port(str(raw).strip().lower())
            if host:
                self.rules.append((host, port))
        # (address, port or None) pairs that allowed host names resolved to during this run
        self.resolved: set[tuple[str, int | None]] = set()

    def host_allowed(self, host, port=None) -> bool:
        host = _norm_host(host)
        if not host:
            return False
        port = _norm_port(port)
        for rule_host, rule_port in self.rules:
            if rule_port is not None and port is not None and rule_port != port:
                continue
            if rule_host == "*" or rule_host == host:
                return True
            if rule_host.startswith("*.") and host.endswith(rule_host[1:]):
                return True
        return False

    def record(self, host, port, address) -> None:
        self.resolved.add((_norm_host(address), _norm_port(port)))

    def was_resolved(self, address, port=None) -> bool:
        address, port = _norm_host(address), _norm_port(port)
        return any(a == address and (p is None or port is None or p == port)
                   for a, p in self.resolved)

    def address_allowed(self, host, port=None) -> bool:
        return self.was_resolved(host, port) or self.host_allowed(host, port)


def _norm_host(host) -> str:
    if isinstance(host, bytes):
        host = host.decode("idna", "replace")
    if not isinstance(host, str):
        return ""
    return host.strip().strip("[]").split("%")[0].lower().rstrip(".")


def _norm_port(port):
    if port in (None, "", b""):
        return None
    try:
        return int(port)
    except (TypeError, ValueError):
        return None


def _split_host_port(text: str) -> tuple[str, int | None]:
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        port = rest[1:] if rest.startswith(":") else ""
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
    else:
        host, port = text, ""
    try:
        return host.rstrip("."), int(port) if port else None
    except ValueError:
        return host, None


def _is_ip(text: str) -> bool:
    if not text:
        return False
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


# --------------------------------------------------------------------------------------
# frames
# --------------------------------------------------------------------------------------

def _is_user_frame(frame) -> bool:
    return frame is not None and frame.f_code.co_filename == _USER


def _user_within(frame, depth: int) -> bool:
    while frame is not None and depth > 0:
        if frame.f_code.co_filename == _USER:
            return True
        frame = frame.f_back
        depth -= 1
    return False


# --------------------------------------------------------------------------------------
# the audit hook
# --------------------------------------------------------------------------------------

_ALWAYS_DENIED = {
    # process creation
    "os.system": "running shell commands",
    "os.exec": "executing programs",
    "os.spawn": "spawning processes",
    "os.posix_spawn": "spawning processes",
    "os.fork": "forking",
    "os.forkpty": "forking",
    "os.startfile": "starting programs",
    "subprocess.Popen": "starting subprocesses",
    "pty.spawn": "spawning processes",
    "os.killpg": "signalling process groups",
    "signal.pthread_kill": "signalling threads",
    # file system changes
    "os.remove": "removing files",
    "os.rename": "renaming files",
    "os.rmdir": "removing directories",
    "os.mkdir": "creating directories",
    "os.link": "creating links",
    "os.symlink": "creating links",
    "os.chmod": "changing file modes",
    "os.chown": "changing file owners",
    "os.chflags": "changing file flags",
    "os.lchflags": "changing file flags",
    "os.lchmod": "changing file modes",
    "os.truncate": "truncating files",
    "os.utime": "changing file times",
    "os.setxattr": "changing extended attributes",
    "os.removexattr": "changing extended attributes",
    "os.add_dll_directory": "loading libraries",
    "shutil.copyfile": "copying files",
    "shutil.copymode": "copying files",
    "shutil.copystat": "copying files",
    "shutil.copytree": "copying files",
    "shutil.rmtree": "removing files",
    "shutil.move": "moving files",
    "shutil.chown": "changing file owners",
    "shutil.make_archive": "writing archives",
    "shutil.unpack_archive": "writing archives",
    "tempfile.mkstemp": "creating temporary files",
    "tempfile.mkdtemp": "creating temporary directories",
    "sqlite3.connect": "opening databases",
    "sqlite3.connect/handle": "opening databases",
    "sqlite3.enable_load_extension": "loading extensions",
    "sqlite3.load_extension": "loading extensions",
    "syslog.openlog": "writing to syslog",
    "syslog.syslog": "writing to syslog",
    "webbrowser.open": "opening a browser",
    # limits, tracing and introspection
    "resource.setrlimit": "changing resource limits",
    "resource.prlimit": "changing resource limits",
    "sys.settrace": "tracing",
    "sys.setprofile": "profiling",
    "sys._current_frames": "reading other threads' frames",
    "sys._current_exceptions": "reading other threads' exceptions",
    "gc.get_objects": "walking the object graph",
    "gc.get_referrers": "walking the object graph",
    "gc.get_referents": "walking the object graph",
    "code.__new__": "constructing code objects",
    "pickle.find_class": "unpickling classes",
    "builtins.breakpoint": "the debugger",
    "builtins.input": "reading standard input",
    "pdb.Pdb": "the debugger",
    "socket.bind": "listening on sockets",
    "ftplib.connect": "FTP",
    "smtplib.connect": "SMTP",
    "poplib.connect": "POP3",
    "imaplib.open": "IMAP",
    "nntplib.connect": "NNTP",
    "telnetlib.Telnet.open": "telnet",
}


class AuditPolicy:
    def __init__(self, read_roots: list[str], hosts: HostPolicy) -> None:
        self.read_roots = [r.rstrip(os.sep) or os.sep for r in read_roots]
        self.hosts = hosts
        self.pid = os.getpid()
        self._local = threading.local()
        h = {name: self._always_denied for name in _ALWAYS_DENIED}
        h.update({
            "open": self._on_open,
            "os.listdir": self._on_list,
            "os.scandir": self._on_list,
            "os.listxattr": self._on_list,
            "os.getxattr": self._on_list,
            "glob.glob": self._on_glob,
            "glob.glob/2": self._on_glob,
            "os.kill": self._on_kill,
            "mmap.__new__": self._on_mmap,
            "socket.__new__": self._on_socket_new,
            "socket.connect": self._on_connect,
            "socket.sendto": self._on_connect,
            "socket.sendmsg": self._on_connect,
            "socket.getaddrinfo": self._on_lookup,
            "socket.gethostbyname": self._on_lookup,
            "socket.gethostbyname_ex": self._on_lookup,
            "socket.gethostbyaddr": self._on_lookup,
            "http.client.connect": self._on_http_connect,
            "urllib.Request": self._on_urllib,
            "sys._getframe": self._on_getframe,
            "object.__getattr__": self._on_object_getattr,
            "compile": self._on_compile,
            "exec": self._on_compile,
            "marshal.load": self._on_compile,
            "marshal.loads": self._on_compile,
            "sys.addaudithook": self._on_addaudithook,
        })
        self._handlers = h

    # The hook itself -------------------------------------------------------------------
    def __call__(self, event: str, args: tuple) -> None:
        handler = self._handlers.get(event)
        if handler is None:
            if event.startswith("ctypes."):
                handler = self._always_denied
            elif event.startswith("cpython.run_"):
                handler = self._always_denied
            else:
                return
        local = self._local
        if getattr(local, "busy", False):
            return  # events raised by this hook's own work
        local.busy = True
        try:
            handler(event, args, sys._getframe(1))
        finally:
            local.busy = False

    # Handlers -------------------------------------------------------------------------
    def _always_denied(self, event, args, frame):
        what = _ALWAYS_DENIED.get(event, "ctypes" if event.startswith("ctypes.") else event)
        raise _deny(f"{what} is not allowed ({event})")

    def _readable(self, path) -> bool:
        if isinstance(path, int):
            return True  # an already open descriptor
        try:
            text = os.fsdecode(os.fspath(path))
        except TypeError:
            return False
        if not os.path.isabs(text):
            text = os.path.join(os.getcwd(), text)
        real = os.path.realpath(text)
        for root in self.read_roots:
            if real == root or real.startswith(root + os.sep):
                return True
        return False

    def _on_open(self, event, args, frame):
        path = args[0] if args else None
        mode = args[1] if len(args) > 1 else None
        flags = args[2] if len(args) > 2 else 0
        writing = (isinstance(mode, str) and any(c in mode for c in "wax+")) or (
            isinstance(flags, int) and flags & _O_WRITE)
        if writing:
            raise _deny(f"opening files for writing is not allowed: {_show(path)}")
        if path is None or not self._readable(path):
            raise _deny(f"reading files outside the runtime is not allowed: {_show(path)}")

    def _on_list(self, event, args, frame):
        path = args[0] if args and args[0] is not None else "."
        if not self._readable(path):
            raise _deny(f"listing directories outside the runtime is not allowed: {_show(path)}")

    def _on_glob(self, event, args, frame):
        pattern = args[0] if args else ""
        try:
            base = os.path.dirname(os.fsdecode(pattern)) or "."
        except TypeError:
            base = "."
        if not self._readable(base):
            raise _deny(f"listing directories outside the runtime is not allowed: {_show(pattern)}")

    def _on_kill(self, event, args, frame):
        pid = args[0] if args else None
        if pid != self.pid:
            raise _deny("signalling other processes is not allowed")

    def _on_mmap(self, event, args, frame):
        if args and args[0] != -1:
            raise _deny("memory-mapping files is not allowed")

    def _on_socket_new(self, event, args, frame):
        family = args[1] if len(args) > 1 else None
        kind = args[2] if len(args) > 2 else None
        # AF_UNIX stays creatable for socketpair() (asyncio's self-pipe); connecting or
        # binding one is refused below, so it cannot reach a local service.
        if family not in (socket.AF_INET, socket.AF_INET6, socket.AF_UNIX, -1):
            raise _deny("only IPv4, IPv6 and socket pairs are allowed")
        if isinstance(kind, int) and kind & 0xF == getattr(socket, "SOCK_RAW", 3):
            raise _deny("raw sockets are not allowed")

    def _on_connect(self, event, args, frame):
        address = args[1] if len(args) > 1 else None
        if address is None and event == "socket.sendmsg":
            return  # sending on an already connected socket
        if not isinstance(address, tuple) or len(address) < 2:
            raise _deny(f"connecting to {_show(address)} is not allowed")
        host, port = address[0], address[1]
        if not self.hosts.address_allowed(host, port):
            raise _deny(f"connections to host '{host}' are not allowed (not in allowHosts)")

    def _on_lookup(self, event, args, frame):
        host = args[0] if args else None
        if host is None:
            return  # passive / local lookup; a later connect is still checked
        if _is_ip(_norm_host(host)) and self.hosts.was_resolved(host, args[1] if len(args) > 1 else None):
            return
        if not self.hosts.host_allowed(host):
            raise _deny(f"connections to host '{host}' are not allowed (not in allowHosts)")

    def _on_http_connect(self, event, args, frame):
        host = args[1] if len(args) > 1 else None
        port = args[2] if len(args) > 2 else None
        if not self.hosts.host_allowed(host, port) and not self.hosts.address_allowed(host, port):
            raise _deny(f"connections to host '{host}' are not allowed (not in allowHosts)")

    def _on_urllib(self, event, args, frame):
        from urllib.parse import urlsplit

        url = args[0] if args else ""
        parts = urlsplit(str(url))
        if parts.scheme not in ("http", "https"):
            raise _deny(f"URL scheme '{parts.scheme}' is not allowed")
        if not self.hosts.host_allowed(parts.hostname, parts.port):
            raise _deny(f"connections to host '{parts.hostname}' are not allowed (not in allowHosts)")

    def _on_getframe(self, event, args, frame):
        # sys._getframe called by user code, or by a helper user code called directly
        # (inspect.currentframe, traceback.extract_stack). ValueError is what the stdlib
        # already expects when the stack is not deep enough (typing, collections, enum).
        if _user_within(frame, 2):
            raise ValueError("[sandbox:audit] frame access is not allowed")

    def _on_object_getattr(self, event, args, frame):
        # Raised for gi_frame, cr_frame, ag_frame, tb_frame, f_code, __code__ ... reads.
        if _is_user_frame(frame):
            name = args[1] if len(args) > 1 else "?"
            raise AttributeError(f"[sandbox:audit] access to '{name}' is not allowed")

    def _on_compile(self, event, args, frame):
        # User code has no eval/exec/compile/marshal; if it reached one anyway (a leaked
        # builtins module), the call comes straight from a user frame. Libraries keep their
        # own uses (dataclasses, namedtuple, typing; importlib unmarshals every new module).
        if _is_user_frame(frame):
            raise _deny(f"dynamic code ({event}) is not allowed")

    def _on_addaudithook(self, event, args, frame):
        # Only a RuntimeError stops the new hook from being added.
        raise RuntimeError("[sandbox:audit] adding audit hooks is not allowed")


def _show(value) -> str:
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "..."


# --------------------------------------------------------------------------------------
# import hook, restricted builtins
# --------------------------------------------------------------------------------------

class UserImportFinder:
    """Meta path finder consulted for every module not yet imported. When the nearest frame
    outside the import machinery is user code, the module must be on the allowlist."""

    def find_spec(self, fullname, path=None, target=None):
        frame = sys._getframe(1)
        while frame is not None:
            fn = frame.f_code.co_filename
            if fn.startswith("<frozen importlib") or fn == _THIS_FILE or (
                    os.sep + "importlib" + os.sep) in fn:
                frame = frame.f_back
                continue
            break
        if _is_user_frame(frame) and not policy.module_allowed(fullname):
            raise ImportError(f"[sandbox:import] import of '{fullname}' is not allowed",
                              name=fullname)
        return None

    def invalidate_caches(self):
        pass


class GuardedImport:
    """The `__import__` in user builtins: allowlisted modules only, no relative imports, no
    private names. `import urllib.parse` binds a view of `urllib` that only has `parse`."""

    def __init__(self, real_import) -> None:
        self._real = real_import

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            raise ImportError("[sandbox:import] relative imports are not allowed")
        if not isinstance(name, str):
            raise ImportError("[sandbox:import] module name must be a string")
        items = tuple(fromlist or ())
        if "*" in items:
            raise ImportError("[sandbox:import] 'import *' is not allowed")
        if not policy.module_allowed(name):
            if not items or not all(policy.module_allowed(f"{name}.{i}") for i in items):
                raise ImportError(f"[sandbox:import] import of '{name}' is not allowed", name=name)
        if name != "__future__":
            for item in items:
                if not policy.attribute_allowed(item):
                    raise ImportError(f"[sandbox:import] importing '{item}' from '{name}' is not allowed")
        module = self._real(name, globals, locals, items, 0)
        if not items and "." in name:
            return _package_view(name, module)
        return module


class _PackageView(types.ModuleType):
    def __getattr__(self, name):
        raise AttributeError(f"[sandbox:import] '{self.__name__}.{name}' is not allowed")


def _package_view(dotted: str, top):
    """For `import a.b.c`, Python binds `a`. When `a` itself is not allowed, hand out a
    module object that only holds the path to the allowed submodule."""
    parts = dotted.split(".")
    if policy.module_allowed(parts[0]):
        return top
    view = _PackageView(parts[0])
    node_view, real = view, top
    for i, part in enumerate(parts[1:], start=1):
        real = getattr(real, part)
        if i == len(parts) - 1 or policy.module_allowed(".".join(parts[: i + 1])):
            setattr(node_view, part, real)
            break
        child = _PackageView(".".join(parts[: i + 1]))
        setattr(node_view, part, child)
        node_view = child
    return view


class GuardedGetattr:
    def __call__(self, obj, name, *default):
        _check_attr(name)
        return getattr(obj, name, *default)


class GuardedSetattr:
    def __call__(self, obj, name, value):
        _check_attr(name)
        setattr(obj, name, value)


class GuardedDelattr:
    def __call__(self, obj, name):
        _check_attr(name)
        delattr(obj, name)


def _check_attr(name) -> None:
    if not isinstance(name, str):
        raise TypeError("attribute name must be a string")
    if not policy.attribute_allowed(name):
        raise AttributeError(f"[sandbox:builtins] access to attribute '{name}' is not allowed")


def user_builtins() -> dict:
    """The builtins dict user code runs with."""
    b = dict(builtins.__dict__)
    for name in policy.DENIED_BUILTINS:
        b.pop(name, None)
    b["__build_class__"] = builtins.__build_class__  # class statements need it
    b["__import__"] = GuardedImport(builtins.__import__)
    b["getattr"] = GuardedGetattr()
    b["setattr"] = GuardedSetattr()
    b["delattr"] = GuardedDelattr()
    return b


# --------------------------------------------------------------------------------------
# library patches
# --------------------------------------------------------------------------------------

def _patch_libraries() -> None:
    from . import checker

    def check_annotation(text) -> None:
        if isinstance(text, str):
            problems = checker.check_expression(text)
            if problems:
                raise TypeError(f"[sandbox:annotations] annotation {text!r} is not allowed: "
                                f"{problems[0].message}")

    typing_mod = sys.modules.get("typing")
    forward_ref = getattr(typing_mod, "ForwardRef", None)
    real_evaluate = getattr(forward_ref, "_evaluate", None)
    if real_evaluate is not None:
        def _evaluate(self, *args, **kwargs):
            check_annotation(getattr(self, "__forward_arg__", None))
            return real_evaluate(self, *args, **kwargs)

        forward_ref._evaluate = _evaluate

    inspect_mod = sys.modules.get("inspect")
    real_get_annotations = getattr(inspect_mod, "get_annotations", None)
    if real_get_annotations is not None:
        def get_annotations(obj, *, globals=None, locals=None, eval_str=False):
            if eval_str:
                raw = real_get_annotations(obj)
                for value in raw.values():
                    check_annotation(value)
            return real_get_annotations(obj, globals=globals, locals=locals, eval_str=eval_str)

        inspect_mod.get_annotations = get_annotations

    logging_mod = sys.modules.get("logging")
    if logging_mod is not None:
        # logging finds the caller with sys._getframe; without frames it logs "(unknown file)".
        logging_mod.currentframe = lambda: None


def _record_resolutions(hosts: HostPolicy) -> None:
    """Wrap socket.getaddrinfo so that addresses of allowed host names become connectable."""
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        result = real(host, port, *args, **kwargs)
        if host is not None and hosts.host_allowed(host, port):
            for entry in result:
                sockaddr = entry[4]
                if sockaddr:
                    hosts.record(host, port, str(sockaddr[0]))
        return result

    socket.getaddrinfo = getaddrinfo


# --------------------------------------------------------------------------------------
# limits and installation
# --------------------------------------------------------------------------------------

def _address_space_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _set_limits(memory_mb: int, timeout_ms: int) -> dict:
    limits = {}
    baseline = _address_space_bytes()
    cap = baseline + int(memory_mb) * 1024 * 1024
    try:
        resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
        limits["addressSpaceBytes"] = cap
        limits["baselineBytes"] = baseline
    except (ValueError, OSError) as exc:
        limits["addressSpaceError"] = str(exc)
    cpu = int(math.ceil(max(1, timeout_ms) / 1000.0)) + 1
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
        limits["cpuSeconds"] = cpu
    except (ValueError, OSError) as exc:
        limits["cpuError"] = str(exc)
    for res in (resource.RLIMIT_FSIZE, resource.RLIMIT_CORE):
        try:
            resource.setrlimit(res, (0, 0))
        except (ValueError, OSError):
            pass
    # A write past RLIMIT_FSIZE raises SIGXFSZ; ignored, the write fails with EFBIG.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    return limits


def install(*, memory_mb: int, timeout_ms: int, read_roots: list[str],
            allow_hosts: list[str], require_seccomp: bool = False) -> dict:
    """Installs every layer in the current process. Irreversible: call it in the child only."""
    report: dict = {}
    sys.dont_write_bytecode = True
    report["limits"] = _set_limits(memory_mb, timeout_ms)
    ok, detail = seccomp.install()
    report["seccomp"] = ok
    report["seccompDetail"] = detail
    if not ok and require_seccomp:
        raise SandboxError(f"seccomp is required but unavailable: {detail}")
    for name in [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.")]:
        del sys.modules[name]
    _patch_libraries()
    hosts = HostPolicy(allow_hosts)
    _record_resolutions(hosts)
    sys.meta_path.insert(0, UserImportFinder())
    sys.addaudithook(AuditPolicy(read_roots, hosts))
    report["auditHook"] = True
    report["importHook"] = True
    return report
