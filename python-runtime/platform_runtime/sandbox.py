"""The runtime sandbox, installed in the forked invocation child before user code is loaded.

Layers, in the order `install()` applies them:
1. resource limits: RLIMIT_AS (the process's address space at install time plus memoryMb),
   RLIMIT_CPU (the timeout plus one second), RLIMIT_FSIZE 0 (no file can grow), RLIMIT_CORE 0;
2. seccomp-bpf (see seccomp.py): no exec/fork, no file creation or writes, no ptrace, kill only
   itself, no raising limits. Kernel-enforced; survives anything user code does in Python;
3. library patches that close unchecked eval paths (typing.ForwardRef, inspect.get_annotations,
   and an `eval` for typing and inspect that never adds the real builtins to a globals dict user
   code holds), give getattr-by-name helpers the attribute rules of user code
   (string.Formatter.get_field, functools.update_wrapper, logging's "{" style), make dataclass
   field names exact identifiers, keep enum.global_enum to the agent's module and keep logging
   working without frame access;
4. an import hook (a meta path finder) that refuses modules outside the allowlist when the
   import is started by user code, while library code keeps importing what it needs;
5. an audit hook (sys.addaudithook, PEP 578). Audit hooks cannot be removed, which is why they
   are only ever installed in the child. It denies: opening files for writing, reading outside
   the allowed roots (the Python installation, site-packages, the runtime directory and
   configured extras), listing directories outside them, file system changes, process
   creation (subprocess, os.system, os.exec*, os.spawn*, os.fork, os.posix_spawn, pty),
   signals to other processes, ctypes, raw/packet/netlink sockets, Unix socket connects, DNS
   lookups and connections to hosts not on the run's allow list (plus the egress proxy),
   listening sockets, new audit hooks, tracing, frame and gc introspection from user code
   (frame reads also from library helpers a few calls below it), code object construction,
   pickle loading, compile/exec/marshal called directly by user code, marshal outside the import
   system, and code compiled at run time from text that fails the rules of user code, unless
   the text is a library file's own bytes or a dataclass/namedtuple template (the compile event
   carries the exact bytes compiled; see `on_compile`). Its state is out of reach of user code
   and it fails closed (see `_audit_factory`).
User code itself then runs with restricted builtins (`user_builtins()`): no eval, exec,
compile, open, input, breakpoint, globals, vars, dir...; `__import__` is the allowlist guard
and getattr/setattr/delattr refuse private and denied attribute names.

A fork server calls `prepare()` once before its first fork: the library patches, the audit
hook's tables and builtins snapshot, the user builtins and the seccomp program are then made
once, and each forked run applies only what depends on it (see `_Prepared`).

This is defence in depth inside one process. The real isolation boundary is the process and
what the OS grants it (separate runtime processes per tenant, an unprivileged user, the
network policy of the host); see README.md for the known limits.
"""

from __future__ import annotations

import ast
import builtins
import functools
import math
import os
import resource
import signal
import socket
import sys
import types

from . import checker, policy, seccomp

_THIS_FILE = os.path.abspath(__file__)
_USER = policy.USER_FILENAME


class SandboxError(RuntimeError):
    pass


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

def host_rules(entries: list[str]) -> tuple[tuple[str, int | None], ...]:
    """allowHosts entries ("host", "host:port", "*.example.com", "[::1]:443", "10.0.0.5") as
    (host, port or None) pairs. A connection is allowed to an address on the list, or to an
    address that a listed host name resolved to during this run."""
    rules = []
    for raw in entries or []:
        host, port = _split_host_port(str(raw).strip().lower())
        host = host.strip("[]")
        if host:
            rules.append((host, port))
    return tuple(rules)


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


# --------------------------------------------------------------------------------------
# frames
# --------------------------------------------------------------------------------------

def _is_user_frame(frame) -> bool:
    return frame is not None and frame.f_code.co_filename == _USER


# Attribute reads that hand out a frame are refused while user code is this close on the stack.
# Library helpers that return frames (traceback.walk_tb, Task.get_stack, Formatter.get_field)
# read them one to four frames below their caller; libraries formatting an exception for their
# own logs run much deeper than that, or after the user's frames have returned.
FRAME_READ_DEPTH = 6


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


def _audit_factory(*, read_roots, rules, resolved, user_ns, self_pid, proxied, always_denied,
                   frame_names, frame_depth, real_getaddrinfo, judge_code, parse, code_sources):
    """Builds the audit hook and the getaddrinfo wrapper that records resolutions.

    `_build_audit_hook` runs this with a private globals dict holding a snapshot of builtins, so
    every function defined here looks names up there, never in a module or builtins user code
    could rebind. Everything the hook needs is captured in closures over immutable values (the
    one exception, `resolved`, is what the getaddrinfo wrapper must add to). Nothing here calls a
    method of an object user code passed in: arguments are first copied to exact str, bytes, int
    or tuple through the C slot wrappers, because an overridden startswith() or __getitem__ could
    show the hook one value while the C function had already used another.
    """
    import _socket
    import errno
    import pathlib
    import posix
    import sys
    from _thread import get_ident
    from urllib.parse import urlsplit

    getframe = sys._getframe
    lstat, readlink, getcwd = posix.lstat, posix.readlink, posix.getcwd
    fs_encoding, fs_errors = sys.getfilesystemencoding(), sys.getfilesystemencodeerrors()
    str_copy, bytes_copy, int_copy = str.__str__, bytes.__bytes__, int.__index__
    tuple_len, tuple_item = tuple.__len__, tuple.__getitem__
    inet_pton = _socket.inet_pton
    af_inet, af_inet6, af_unix = _socket.AF_INET, _socket.AF_INET6, _socket.AF_UNIX
    sock_raw = getattr(_socket, "SOCK_RAW", 3)
    o_write = posix.O_WRONLY | posix.O_RDWR | posix.O_CREAT | posix.O_TRUNC | posix.O_APPEND
    trusted_path_types = (pathlib.PurePosixPath, pathlib.PosixPath)
    root_prefixes = tuple(r + "/" for r in read_roots)
    # Thread ids whose next sys._getframe event is the hook's own frame lookup. A token used
    # once, not a flag: code running inside the hook (or a flag flipped by a walk to it) gains
    # nothing, every other event is checked as usual.
    own_lookup = set()

    def deny(message):
        return PermissionError(errno.EPERM, "[sandbox:audit] " + message)

    def show(text):
        if text is None:
            return "an object that is not a path"
        shown = repr(text)
        return shown if len(shown) <= 200 else shown[:200] + "..."

    # -- exact copies of what user code passed ------------------------------------------
    def plain_text(value):
        kind = type(value)
        if kind is str:
            return value
        if kind is bytes:
            return value.decode(fs_encoding, fs_errors)
        if issubclass(kind, str):
            return str_copy(value)
        if issubclass(kind, bytes):
            return bytes_copy(value).decode(fs_encoding, fs_errors)
        return None

    def plain_host(value):
        # No str subclasses: the C socket functions encode non-ASCII names with the Python idna
        # codec, which calls the object's own methods.
        kind = type(value)
        if kind is str:
            return value
        if kind is bytes:
            return value.decode("latin-1")
        if issubclass(kind, bytes):
            return bytes_copy(value).decode("latin-1")
        return None

    def plain_int(value):
        return int_copy(value) if issubclass(type(value), int) else None

    def path_text(value):
        text = plain_text(value)
        kind = type(value)
        # Identity, not `in`: a metaclass's __eq__ is user code too.
        if text is None and (kind is trusted_path_types[0] or kind is trusted_path_types[1]):
            text = plain_text(str(value))
        return text

    # -- files ---------------------------------------------------------------------------
    def real_path(text):
        """os.path.realpath on captured system calls only."""
        if not text.startswith("/"):
            text = getcwd() + "/" + text
        pending = text.split("/")
        pending.reverse()
        parts = []
        hops = 0
        while pending:
            name = pending.pop()
            if name == "" or name == ".":
                continue
            if name == "..":
                if parts:
                    parts.pop()
                continue
            candidate = "/" + "/".join(parts + [name])
            try:
                mode = lstat(candidate).st_mode
            except (OSError, ValueError):
                parts.append(name)  # does not exist (yet): resolved lexically, like realpath
                continue
            if (mode & 0o170000) != 0o120000:
                parts.append(name)
                continue
            hops += 1
            if hops > 40:
                return None
            target = readlink(candidate)
            if target.startswith("/"):
                parts = []
            more = target.split("/")
            more.reverse()
            pending.extend(more)
        return "/" + "/".join(parts)

    def readable(value):
        if issubclass(type(value), int):
            return True  # an already open descriptor
        text = path_text(value)
        real = real_path(text) if text is not None else None
        return real is not None and (real in read_roots or real.startswith(root_prefixes))

    def on_open(event, args, caller):
        path = args[0] if len(args) > 0 else None
        mode = plain_text(args[1]) if len(args) > 1 and args[1] is not None else None
        flags = plain_int(args[2]) if len(args) > 2 else 0
        writing = (mode is not None and any(c in mode for c in "wax+")) or (flags or 0) & o_write
        if writing:
            return deny("opening files for writing is not allowed: " + show(path_text(path)))
        if path is None or not readable(path):
            return deny("reading files outside the runtime is not allowed: " + show(path_text(path)))
        return None

    def on_list(event, args, caller):
        path = args[0] if len(args) > 0 and args[0] is not None else "."
        if not readable(path):
            return deny("listing directories outside the runtime is not allowed: " + show(path_text(path)))
        return None

    def on_glob(event, args, caller):
        pattern = plain_text(args[0]) if len(args) > 0 else None
        if pattern is None:
            return deny("listing directories outside the runtime is not allowed")
        head = pattern[: pattern.rfind("/") + 1]
        if head and head != "/" * len(head):
            head = head.rstrip("/")
        if not readable(head or "."):
            return deny("listing directories outside the runtime is not allowed: " + show(pattern))
        return None

    # -- processes -------------------------------------------------------------------------
    def on_kill(event, args, caller):
        if (plain_int(args[0]) if len(args) > 0 else None) != self_pid:
            return deny("signalling other processes is not allowed")
        return None

    def on_mmap(event, args, caller):
        if len(args) > 0 and plain_int(args[0]) != -1:
            return deny("memory-mapping files is not allowed")
        return None

    # -- network ---------------------------------------------------------------------------
    def norm_host(text):
        return text.strip().strip("[]").split("%")[0].lower().rstrip(".")

    def norm_port(value):
        number = plain_int(value)
        if number is not None:
            return number
        text = plain_text(value)
        if text is not None and text.isdigit():
            return int(text)
        return None

    def is_ip(text):
        for family in (af_inet, af_inet6):
            try:
                inet_pton(family, text)
                return True
            except (OSError, ValueError):
                pass
        return False

    def host_allowed(host, port):
        for rule_host, rule_port in rules:
            if rule_port is not None and port is not None and rule_port != port:
                continue
            if rule_host == "*" or rule_host == host:
                return True
            if rule_host.startswith("*.") and host.endswith(rule_host[1:]):
                return True
        return False

    def was_resolved(address, port):
        if port is not None:
            return (address, port) in resolved or (address, None) in resolved
        return any(a == address for a, _p in tuple(resolved))

    def on_socket_new(event, args, caller):
        family = plain_int(args[1]) if len(args) > 1 else None
        kind = plain_int(args[2]) if len(args) > 2 else None
        # AF_UNIX stays creatable for socketpair() (asyncio's self-pipe); connecting or binding
        # one is refused, so it cannot reach a local service.
        if family not in (af_inet, af_inet6, af_unix, -1):
            return deny("only IPv4, IPv6 and socket pairs are allowed")
        if kind is not None and kind & 0xF == sock_raw:
            return deny("raw sockets are not allowed")
        return None

    def on_connect(event, args, caller):
        address = args[1] if len(args) > 1 else None
        if address is None and event == "socket.sendmsg":
            return None  # sending on an already connected socket
        host = port = None
        if issubclass(type(address), tuple) and tuple_len(address) >= 2:
            host, port = plain_host(tuple_item(address, 0)), plain_int(tuple_item(address, 1))
        if host is None or port is None:
            return deny("connecting to " + show(plain_text(address)) + " is not allowed")
        host = norm_host(host)
        if not (was_resolved(host, port) or host_allowed(host, port)):
            return deny(f"connections to host '{host}' are not allowed (not in allowHosts)")
        return None

    def on_lookup(event, args, caller):
        if len(args) == 0 or args[0] is None:
            return None  # passive / local lookup; a later connect is still checked
        host = plain_host(args[0])
        if host is None:
            return deny("host names must be plain strings")
        host = norm_host(host)
        port = norm_port(args[1]) if len(args) > 1 else None
        if is_ip(host) and was_resolved(host, port):
            return None
        if not host_allowed(host, None):
            return deny(f"connections to host '{host}' are not allowed (not in allowHosts)")
        return None

    def on_http_connect(event, args, caller):
        host = plain_host(args[1]) if len(args) > 1 else None
        if host is None:
            return deny("host names must be plain strings")
        host, port = norm_host(host), norm_port(args[2]) if len(args) > 2 else None
        if not (host_allowed(host, port) or was_resolved(host, port)):
            return deny(f"connections to host '{host}' are not allowed (not in allowHosts)")
        return None

    def on_urllib(event, args, caller):
        url = plain_text(args[0]) if len(args) > 0 else None
        parts = urlsplit(url or "")
        if parts.scheme not in ("http", "https"):
            return deny(f"URL scheme '{parts.scheme}' is not allowed")
        # Through the egress proxy the proxy decides which hosts a URL may name; the connection
        # itself is still checked (it may only go to the proxy or a listed host).
        if not proxied and not host_allowed(norm_host(parts.hostname or ""), parts.port):
            return deny(f"connections to host '{parts.hostname}' are not allowed (not in allowHosts)")
        return None

    # -- frames and dynamic code -----------------------------------------------------------
    def user_within(frame, depth):
        # f_globals, not f_code: reading f_globals raises no audit event of its own.
        while frame is not None and depth > 0:
            if frame.f_globals is user_ns:
                return True
            frame = frame.f_back
            depth -= 1
        return False

    def on_getframe(event, args, caller):
        # sys._getframe called by user code, or by a helper user code called directly
        # (inspect.currentframe, traceback.extract_stack). ValueError is what the stdlib
        # already expects when the stack is not deep enough (typing, collections, enum).
        if user_within(caller, 2):
            return ValueError("[sandbox:audit] frame access is not allowed")
        return None

    def on_object_getattr(event, args, caller):
        name = plain_text(args[1]) if len(args) > 1 else None
        depth = frame_depth if name in frame_names else 1
        if user_within(caller, depth):
            return AttributeError(f"[sandbox:audit] access to '{name}' is not allowed")
        return None

    # -- code compiled at run time ------------------------------------------------------
    # Every code object made after install passes the "compile" event (compile(), exec and
    # eval of text, compile() of a syntax tree; code.__new__ is refused and marshal is left to
    # the import system), with the exact bytes the compiler reads. What is judged is that
    # text, never the object a library was handed: a str subclass can answer strip() or
    # isidentifier() one way while the compiler reads other characters.
    parse_only, importers, generators = (code_sources["parse_only"], code_sources["importers"],
                                         code_sources["generators"])
    user_loader, user_filename = code_sources["user_loader"], code_sources["user_filename"]
    o_rdonly = posix.O_RDONLY | getattr(posix, "O_CLOEXEC", 0)
    posix_open, posix_read, posix_close = posix.open, posix.read, posix.close

    def globals_in(frame, candidates):
        if frame is None:
            return False
        g = frame.f_globals
        for candidate in candidates:
            if g is candidate:
                return True
        return False

    def library_source(filename, text):
        # The import system compiling a module's source: the text must be the file's bytes,
        # so a loader handed other text under a library's name gains nothing.
        name = plain_text(filename) if filename is not None else None
        real = real_path(name) if name else None
        if real is None or not real.startswith(root_prefixes):
            return False
        fd = posix_open(real, o_rdonly)
        try:
            chunks, size = [], 0
            while size <= len(text):
                chunk = posix_read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
                size += len(chunk)
        finally:
            posix_close(fd)
        return b"".join(chunks) == text

    def on_compile(event, args, caller):
        # User code has no eval/exec/compile/marshal; if it reached one anyway (a leaked
        # builtins module), the call comes straight from a user frame.
        if user_within(caller, 1):
            return deny(f"dynamic code ({event}) is not allowed")
        if event == "exec":
            return None  # the code object was judged when it was compiled
        if event != "compile":
            # marshal: the import system reading a cached module, nobody else.
            if globals_in(caller, importers):
                return None
            return deny(f"loading code at run time ({event}) is not allowed")
        source = args[0] if len(args) > 0 else None
        if globals_in(caller, parse_only):
            return None  # ast.parse: a syntax tree, no code
        kind = type(source)
        if kind is bytes or issubclass(kind, bytes):
            text = bytes_copy(source)
        elif kind is str or issubclass(kind, str):
            text = str_copy(source).encode("utf-8", "surrogatepass")
        else:
            # A syntax tree made by whoever called compile(): its nodes are objects the
            # compiler reads after this event, so there is nothing reliable to check.
            return deny("compiling a syntax tree at run time is not allowed")
        filename = args[1] if len(args) > 1 else None
        if globals_in(caller, importers) and library_source(filename, text):
            return None
        if globals_in(caller, user_loader) and plain_text(filename) == user_filename:
            return None  # the agent's own source, compiled to run with the user builtins
        if globals_in(caller, generators):
            # dataclasses and namedtuple paste field names into fixed templates; the sandbox
            # makes those names exact identifiers before they get there (_patch_dataclasses;
            # namedtuple checks exact str itself).
            return None
        try:
            problems = judge_code(text, parse)
        except SyntaxError:
            return SyntaxError("[sandbox:audit] code compiled at run time must parse as "
                               "Python to be checked")
        if problems:
            return deny("dynamic code is not allowed: code compiled at run time is held to "
                        "the rules of user code (" + problems[0].message + ")")
        return None

    def on_addaudithook(event, args, caller):
        # Only a RuntimeError stops the new hook from being added.
        return RuntimeError("[sandbox:audit] adding audit hooks is not allowed")

    def on_always_denied(event, args, caller):
        what = always_denied.get(event) or ("ctypes" if event.startswith("ctypes.") else event)
        return deny(f"{what} is not allowed ({event})")

    handlers = {name: on_always_denied for name in always_denied}
    handlers.update({
        "open": on_open, "os.listdir": on_list, "os.scandir": on_list,
        "os.listxattr": on_list, "os.getxattr": on_list,
        "glob.glob": on_glob, "glob.glob/2": on_glob,
        "os.kill": on_kill, "mmap.__new__": on_mmap,
        "socket.__new__": on_socket_new, "socket.connect": on_connect,
        "socket.sendto": on_connect, "socket.sendmsg": on_connect,
        "socket.getaddrinfo": on_lookup, "socket.gethostbyname": on_lookup,
        "socket.gethostbyname_ex": on_lookup, "socket.gethostbyaddr": on_lookup,
        "http.client.connect": on_http_connect, "urllib.Request": on_urllib,
        "sys._getframe": on_getframe, "object.__getattr__": on_object_getattr,
        "compile": on_compile, "exec": on_compile, "marshal.load": on_compile,
        "marshal.loads": on_compile, "sys.addaudithook": on_addaudithook,
    })
    handlers = tuple(handlers.items())
    lookup = dict(handlers).get

    def decide(event, args):
        """The exception that denies the event, or None. Never raises: a failure to decide is a
        denial."""
        handler = lookup(event)
        if handler is None:
            if not event.startswith(("ctypes.", "cpython.run_")):
                return None
            handler = on_always_denied
        me = get_ident()
        if event == "sys._getframe" and me in own_lookup:
            own_lookup.discard(me)
            return None
        try:
            own_lookup.add(me)
            try:
                caller = getframe(2)  # 0 this function, 1 the hook, 2 whoever raised the event
            except ValueError:
                caller = None
            finally:
                own_lookup.discard(me)
            return handler(event, args, caller)
        except MemoryError:
            return MemoryError("[sandbox:audit] out of memory while checking " + event)
        except BaseException:
            return deny(event + " could not be checked")

    def audit_hook(event, args, _decide=decide):
        denial = _decide(event, args)
        if denial is not None:
            # The traceback of the denial holds this frame: leave nothing in it.
            del _decide, event, args
            raise denial

    def getaddrinfo(host, port, *args, **kwargs):
        # An exact str goes to the resolver, so the name the audit event showed is the one
        # resolved; only addresses of allowed names are recorded as connectable.
        if host is not None:
            if type(host) is not str and not issubclass(type(host), bytes):
                raise deny("host names must be plain strings")
            host = host if type(host) is str else bytes_copy(host)
        result = real_getaddrinfo(host, port, *args, **kwargs)
        if host is not None:
            name, number = norm_host(plain_host(host)), norm_port(port)
            if host_allowed(name, number):
                for entry in result:
                    if entry[4]:
                        resolved.add((norm_host(str(entry[4][0])), number))
        return result

    return audit_hook, getaddrinfo


def _code_sources(source_loaders: tuple = ()) -> types.MappingProxyType:
    """Module globals that identify who is compiling (a frame's f_globals, which no code can
    choose without already running in that module): `ast` only parses, the import system
    compiles and unmarshals library files, dataclasses and namedtuple fill templates, and the
    runner compiles the agent's source (statically checked, run with the user builtins)."""
    import collections
    import dataclasses

    def module_globals(*names):
        return tuple(sys.modules[n].__dict__ for n in names if n in sys.modules)

    return types.MappingProxyType({
        "parse_only": (ast.__dict__,),
        "importers": module_globals("_frozen_importlib", "_frozen_importlib_external",
                                    "importlib._bootstrap", "importlib._bootstrap_external",
                                    "zipimport"),
        "generators": (dataclasses.__dict__, collections.__dict__),
        "user_loader": module_globals("platform_runtime.runner") + source_loaders,
        "user_filename": _USER,
    })


def _hook_parts(read_roots, source_loaders=()) -> dict:
    """The audit hook's inputs that are the same for every run: the private globals its
    functions run with (a snapshot of builtins), the read roots, the denial table and who may
    compile. A fork server makes them once (`prepare`); each set serves one hook only."""
    return {
        "globals": {"__builtins__": dict(builtins.__dict__), "__name__": __name__ + ".<audit>"},
        "read_roots": tuple(r.rstrip(os.sep) or os.sep for r in read_roots),
        "always_denied": types.MappingProxyType(dict(_ALWAYS_DENIED)),
        "code_sources": _code_sources(tuple(source_loaders)),
    }


def _build_audit_hook(*, read_roots, allow_hosts, user_ns, proxied, source_loaders=(), parts=None):
    """(audit hook, getaddrinfo wrapper) for this process. See `_audit_factory`.
    `source_loaders`: globals of further modules that compile the agent's source (tests);
    `parts`: `_hook_parts(read_roots, source_loaders)` made beforehand (by `prepare`)."""
    if parts is None:
        parts = _hook_parts(read_roots, source_loaders)
    factory = types.FunctionType(_audit_factory.__code__, parts["globals"], "_audit_factory")
    hook, getaddrinfo = factory(
        read_roots=parts["read_roots"],
        rules=host_rules(allow_hosts), resolved=set(), user_ns=user_ns, self_pid=os.getpid(),
        proxied=proxied, always_denied=parts["always_denied"],
        frame_names=policy.FRAME_ATTRIBUTES, frame_depth=FRAME_READ_DEPTH,
        real_getaddrinfo=socket.getaddrinfo, judge_code=checker.check_dynamic_code,
        parse=ast.parse, code_sources=parts["code_sources"])
    # The registered function keeps its decider in a default argument and runs with empty
    # globals: a traceback frame of a denial leads nowhere.
    hook = types.FunctionType(hook.__code__, {"__builtins__": {}}, "audit_hook", hook.__defaults__)
    return hook, getaddrinfo


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
        try:
            name = plain_name(name)
            items = tuple(plain_name(item) for item in (fromlist or ()))
        except TypeError:
            raise ImportError("[sandbox:import] module names must be strings") from None
        if "*" in items:
            raise ImportError("[sandbox:import] 'import *' is not allowed")
        if not policy.module_allowed(name):
            if not items or not all(policy.module_allowed(f"{name}.{i}")
                                    or policy.name_import_allowed(name, i) for i in items):
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
        return getattr(obj, _checked_attr(name), *default)


class GuardedSetattr:
    def __call__(self, obj, name, value):
        setattr(obj, _checked_attr(name), value)


class GuardedDelattr:
    def __call__(self, obj, name):
        delattr(obj, _checked_attr(name))


def plain_name(name) -> str:
    """An exact str copy of `name`. A str subclass could answer startswith() or __eq__ one way
    to a guard, while getattr and import use the characters it holds."""
    if type(name) is str:
        return name
    if issubclass(type(name), str):
        return str.__str__(name)
    raise TypeError("names must be strings")


def _checked_attr(name) -> str:
    name = plain_name(name)
    if not policy.attribute_allowed(name):
        raise AttributeError(f"[sandbox:builtins] access to attribute '{name}' is not allowed")
    return name


# A builtins dict made by `prepare` in the fork server, handed out once per process (each run is
# a fork of its own, so what one run does to its dict reaches no other run).
_prepared_builtins: dict | None = None


def user_builtins() -> dict:
    """The builtins dict user code runs with."""
    global _prepared_builtins
    prepared, _prepared_builtins = _prepared_builtins, None
    return prepared if prepared is not None else _new_user_builtins()


def _new_user_builtins() -> dict:
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

def _patch_libraries(user_globals: dict) -> None:
    _patch_shared_libraries()
    _patch_global_enum(user_globals)


def _patch_shared_libraries() -> None:
    """The patches that are the same for every run, each applied once per process: by `prepare`
    in the fork server (every run forked from it starts patched), else by `install`, which also
    patches any module on the list loaded since."""
    for name, patch, always in _LIBRARY_PATCHES:
        if name in _patched_modules or (not always and name not in sys.modules):
            continue
        patch()
        _patched_modules.add(name)


def _check_annotation(text) -> None:
    if isinstance(text, str):
        # The characters eval() will compile, not what a str subclass's strip() answers.
        text = plain_name(text)
        problems = checker.check_expression(text)
        if problems:
            raise TypeError(f"[sandbox:annotations] annotation {text!r} is not allowed: "
                            f"{problems[0].message}")


def _patch_typing() -> None:
    typing_mod = sys.modules.get("typing")
    forward_ref = getattr(typing_mod, "ForwardRef", None)
    real_evaluate = getattr(forward_ref, "_evaluate", None)
    if real_evaluate is not None:
        def _evaluate(self, *args, **kwargs):
            _check_annotation(getattr(self, "__forward_arg__", None))
            return real_evaluate(self, *args, **kwargs)

        forward_ref._evaluate = _evaluate
    _patch_eval_globals("typing")


def _patch_inspect() -> None:
    inspect_mod = sys.modules.get("inspect")
    real_get_annotations = getattr(inspect_mod, "get_annotations", None)
    if real_get_annotations is not None:
        def get_annotations(obj, *, globals=None, locals=None, eval_str=False):
            if eval_str:
                raw = real_get_annotations(obj)
                for value in raw.values():
                    _check_annotation(value)
            return real_get_annotations(obj, globals=globals, locals=locals, eval_str=eval_str)

        inspect_mod.get_annotations = get_annotations
    _patch_eval_globals("inspect")


def _patch_logging() -> None:
    # logging finds the caller with sys._getframe; without frames it logs "(unknown file)".
    sys.modules["logging"].currentframe = lambda: None
    _patch_logging_styles()


def _library_denial(what: str) -> AttributeError:
    return AttributeError(f"[sandbox:library] {what} is not allowed")


def _patch_format_fields() -> None:
    """string.Formatter().get_field("0.__init__.__globals__", ...) is getattr by a computed name,
    run from library code (where the audit hook trusts frame reads) and returning the object
    itself. Its attribute steps get the attribute rules of user code."""
    import _string
    import string

    real_get_field = string.Formatter.get_field
    split = _string.formatter_field_name_split

    def get_field(self, field_name, args, kwargs):
        # The C splitter reads the characters the string holds, as the original does next.
        _first, rest = split(field_name)
        for is_attribute, name in rest:
            if is_attribute and not policy.attribute_allowed(name):
                raise _library_denial(f"format field attribute '{name}'")
        return real_get_field(self, field_name, args, kwargs)

    string.Formatter.get_field = get_field


# Names functools may copy besides the public ones: its defaults and what decorators set.
_WRAPPER_NAMES = frozenset({"__module__", "__name__", "__qualname__", "__doc__", "__dict__",
                            "__annotations__", "__type_params__", "__wrapped__",
                            "__text_signature__", "__signature__"})


def _patch_update_wrapper() -> None:
    """functools.update_wrapper(w, f, assigned=("__globals__",)) copies f.__globals__ onto w
    with getattr from library code. functools.wraps resolves update_wrapper at call time, so
    this covers both."""
    import functools

    real = functools.update_wrapper

    def checked(names) -> tuple:
        out = tuple(plain_name(n) for n in names)  # copied once: what is checked is what is used
        for name in out:
            if name not in _WRAPPER_NAMES and not policy.attribute_allowed(name):
                raise _library_denial(f"copying attribute '{name}' with functools")
        return out

    def update_wrapper(wrapper, wrapped, assigned=functools.WRAPPER_ASSIGNMENTS,
                       updated=functools.WRAPPER_UPDATES):
        return real(wrapper, wrapped, checked(assigned), checked(updated))

    update_wrapper.__doc__ = real.__doc__
    functools.update_wrapper = update_wrapper


# Modules whose code calls eval() with a globals dict that can come from the object being
# inspected (get_type_hints and get_annotations read `obj.__globals__`, which __getattr__
# answers).
_EVAL_WITH_FOREIGN_GLOBALS = ("typing", "inspect", "typing_extensions",
                              "pydantic._internal._namespace_utils")
# Modules whose `exec_` is the real exec under a name of its own.
_EXEC_UNDER_OTHER_NAMES = ("six", "botocore.vendored.six")


def _shadow_for(real, module_globals: dict):
    def evaluate(source, globals=None, locals=None):
        if globals is None:
            globals = module_globals  # what eval() would use in that module's frame
        if isinstance(globals, dict) and not dict.__contains__(globals, "__builtins__"):
            own = dict.copy(globals)
            locals = own if locals is globals else locals
            globals = own
        if locals is None:
            return real(source, globals)
        return real(source, globals, locals)

    return evaluate


def _patch_eval_globals(name: str) -> None:
    """eval(code, globals) stores the caller's builtins into a globals dict that has none, and
    the caller here is library code, so those are the real builtins: a dict handed to
    get_type_hints by an object's `__globals__` came back holding eval, open and __import__.
    These modules' own `eval` name is shadowed by one that evaluates with a copy of such a
    dict, so nothing is ever added to a dict user code holds."""
    module = sys.modules.get(name)
    if module is not None:
        module.__dict__["eval"] = _shadow_for(builtins.eval, module.__dict__)


def _patch_exec_alias(name: str) -> None:
    """six.exec_ is the real exec under a name of its own: called through a library function
    (singledispatch's wrapper) its caller is library code, and exec(text, {}) handed the real
    builtins back in the dict. The name is refused to user code as well (policy)."""
    module = sys.modules.get(name)
    if module is not None and getattr(module, "exec_", None) is builtins.exec:
        module.__dict__["exec_"] = _shadow_for(builtins.exec, module.__dict__)


def _patch_dataclasses() -> None:
    """dataclasses pastes field names into the source of __init__, __repr__ and __setattr__
    (with f-strings and repr()), and the audit hook lets those templates compile. A field name
    is therefore made an exact str and must be an identifier: a str subclass passing
    make_dataclass's isidentifier() check while its repr() was code got that code compiled."""
    import dataclasses
    import keyword

    real_get_field = getattr(dataclasses, "_get_field", None)
    if real_get_field is None:
        return

    def _get_field(cls, a_name, *args, **kwargs):
        try:
            name = plain_name(a_name)
        except TypeError:
            name = None
        if name is None or not name.isidentifier() or keyword.iskeyword(name):
            raise TypeError(f"[sandbox:library] dataclass field names must be identifiers, "
                            f"not {str.__repr__(name) if name is not None else 'a non-string'}")
        return real_get_field(cls, name, *args, **kwargs)

    dataclasses._get_field = _get_field


def _format_template_denial(template: str) -> str | None:
    """The first attribute a format template would read that user code may not, or None.
    Fields nested in format specs are followed too."""
    import _string

    for _literal, field, spec, _conversion in _string.formatter_parser(template):
        if field is not None:
            _first, rest = _string.formatter_field_name_split(field)
            for is_attribute, name in rest:
                if is_attribute and not policy.attribute_allowed(name):
                    return name
        if spec:
            inner = _format_template_denial(spec)
            if inner is not None:
                return inner
    return None


def _patch_logging_styles() -> None:
    """logging's '{' style formats every record with `fmt.format(**record.__dict__)`, from
    library code: basicConfig(format="{msg.__globals__}", style="{") read attributes by a
    name the checker never saw. The template is checked (and kept as an exact str copy) when
    the style is made."""
    logging_mod = sys.modules.get("logging")
    style = getattr(logging_mod, "StrFormatStyle", None)
    if style is None:
        return
    real_init = style.__init__

    def __init__(self, fmt, *args, **kwargs):
        real_init(self, fmt, *args, **kwargs)
        template = plain_name(self._fmt)
        denied = _format_template_denial(template)
        if denied is not None:
            raise _library_denial(f"format field attribute '{denied}' in a logging format")
        self._fmt = template

    style.__init__ = __init__


def _patch_logging_config() -> None:
    """logging.config (loaded by Strands' dependencies, reachable as `boto3.logging.config`)
    imports modules and reads attributes named in a configuration: dictConfig with
    {"()": "types.SimpleNamespace", "m": "ext://os"} handed back the real os module, imported by
    library code where the import guard trusts the caller. Configuring logging from names is
    nothing an agent needs: the resolvers refuse once the sandbox is up."""
    config = sys.modules.get("logging.config")
    if config is None:
        return  # not loaded: nothing can reach it (user code cannot import logging)

    def refuse(*_args, **_kwargs):
        raise _library_denial("logging configuration that names modules or objects")

    config.BaseConfigurator.resolve = refuse
    config.BaseConfigurator.importer = staticmethod(refuse)
    config._resolve = refuse


def _patch_global_enum(user_globals: dict) -> None:
    """enum.global_enum(cls) copies the members into sys.modules[cls.__module__].__dict__, and
    the functional API lets the caller name that module: Enum("R", {"attribute_allowed": 1},
    module="platform_runtime.policy", type=Callable) replaced the sandbox's own checks. Here it
    may only write into the agent's module (the standard library decorates its own enums at
    import, before the sandbox)."""
    import enum

    real = getattr(enum, "global_enum", None)
    if real is None:
        return

    def global_enum(cls, update_str=False):
        # The module the real function will index by is the class's own __module__ only when
        # no metaclass can answer the lookup differently (its own __getattribute__, or a
        # descriptor named __module__): anything else is refused before reading it.
        meta = type(cls)
        plain_lookup = (
            isinstance(cls, type) and meta.__getattribute__ is type.__getattribute__
            and all(isinstance(k.__dict__.get("__module__", ""), str)
                    for k in meta.__mro__ if k is not type))
        declared = type.__dict__["__module__"].__get__(cls, meta) if plain_lookup else None
        module = sys.modules.get(plain_name(declared)) if isinstance(declared, str) else None
        if module is None or module.__dict__ is not user_globals:
            raise _library_denial("enum.global_enum outside the agent's own module")
        return real(cls, update_str)

    enum.global_enum = global_enum


# (module, patch, applied even when the module is not loaded yet: the patch imports it).
_LIBRARY_PATCHES = (
    ("typing", _patch_typing, False),
    ("inspect", _patch_inspect, False),
    ("logging", _patch_logging, False),
    ("logging.config", _patch_logging_config, False),
    ("string", _patch_format_fields, True),
    ("functools", _patch_update_wrapper, True),
    ("dataclasses", _patch_dataclasses, True),
    *((name, functools.partial(_patch_eval_globals, name), False)
      for name in _EVAL_WITH_FOREIGN_GLOBALS if name not in ("typing", "inspect")),
    *((name, functools.partial(_patch_exec_alias, name), False)
      for name in _EXEC_UNDER_OTHER_NAMES),
)
# The modules of `_LIBRARY_PATCHES` already patched in this process (or the fork server it
# was forked from).
_patched_modules: set[str] = set()


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


class _Prepared:
    """What `install` needs that comes out the same for every run, made once in the fork server
    before its first fork: each run starts with it (copy-on-write) instead of building it. The
    run's own part (limits, its pid in the filter, its hosts, proxy and module) is still applied
    per run. Each run consumes it (`install` drops it before user code runs)."""

    def __init__(self, read_roots: list[str]) -> None:
        self.read_roots = read_roots
        self.hook_parts = _hook_parts(read_roots)
        # Last, once nothing more is imported: the module set these were made for.
        self.ctypes_modules = _ctypes_modules()
        self.module_count = len(sys.modules)
        self.last_module = next(reversed(sys.modules), None)

    def modules_unchanged(self) -> bool:
        # Nothing between the fork and here removes a module (the runtime imports, it never
        # unloads, and a failed import only removes the module it failed to load), so the same
        # count means the same modules; the last one is checked as well.
        return (len(sys.modules) == self.module_count
                and next(reversed(sys.modules), None) == self.last_module)


_prepared: _Prepared | None = None


def prepare(read_roots: list[str]) -> None:
    """Called once by the fork server, after preloading and before the first fork. Every run
    forked from it then installs only what depends on the run; a process that never calls this
    (a voice session) installs everything itself, with the same result."""
    global _prepared, _prepared_builtins
    seccomp.prepare()
    _patch_shared_libraries()
    _prepared_builtins = _new_user_builtins()
    _prepared = _Prepared(read_roots)


def _ctypes_modules() -> list[str]:
    return [m for m in sys.modules if m == "ctypes" or m.startswith("ctypes.")]


def install(*, memory_mb: int, timeout_ms: int, read_roots: list[str],
            allow_hosts: list[str], user_globals: dict, proxy: str | None = None,
            require_seccomp: bool = False) -> dict:
    """Installs every layer in the current process. Irreversible: call it in the child only.

    `user_globals` is the namespace the user module will run in (frames with these globals are
    user code); `proxy` ("host:port") is the egress proxy, connectable in addition to
    `allow_hosts`."""
    global _prepared
    prepared, _prepared = _prepared, None
    report: dict = {}
    sys.dont_write_bytecode = True
    report["limits"] = _set_limits(memory_mb, timeout_ms)
    # Before seccomp and the audit hook: both refuse what this needs (prctl through ctypes).
    seccomp.set_dumpable(False)
    report["dumpable"] = seccomp.get_dumpable()
    ok, detail = seccomp.install()
    seccomp.forget()
    report["seccomp"] = ok
    report["seccompDetail"] = detail
    if not ok and require_seccomp:
        raise SandboxError(f"seccomp is required but unavailable: {detail}")
    if prepared is not None and not prepared.modules_unchanged():
        prepared = None  # something was imported since: nothing prepared is taken for granted
    for name in prepared.ctypes_modules if prepared is not None else _ctypes_modules():
        sys.modules.pop(name, None)
    _patch_libraries(user_globals)
    hook, getaddrinfo = _build_audit_hook(
        read_roots=read_roots, allow_hosts=list(allow_hosts) + ([proxy] if proxy else []),
        user_ns=user_globals, proxied=proxy is not None,
        parts=prepared.hook_parts if prepared is not None and read_roots is prepared.read_roots
        else None)
    socket.getaddrinfo = getaddrinfo
    sys.meta_path.insert(0, UserImportFinder())
    sys.addaudithook(hook)
    report["auditHook"] = True
    report["importHook"] = True
    return report
