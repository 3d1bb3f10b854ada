"""A seccomp-bpf filter for the invocation child (Linux x86_64 and aarch64).

Why: the audit hook is a Python-level control, and some ways to start a process raise no audit
event at all (`_posixsubprocess.fork_exec` on 3.11 and 3.12). The kernel filter holds even if
user code defeats every Python-level layer: once installed it cannot be removed.

The filter makes these system calls fail with EPERM (ENOSYS for clone3 and openat2, whose
arguments a filter cannot inspect, so the C library falls back to clone / openat):
- process creation: execve, execveat, fork, vfork; clone unless it creates a thread
- file creation and modification: open/openat with a write flag (O_WRONLY, O_RDWR, O_CREAT,
  O_TRUNC, O_APPEND), creat, rename*, unlink*, mkdir*, rmdir, link*, symlink*, mknod*,
  chmod/chown families, truncate, utime*
- kill/tgkill/rt_sigqueueinfo/rt_tgsigqueueinfo aimed at any process but this one, tkill
- process handles: pidfd_open, pidfd_send_signal, pidfd_getfd, process_madvise (no audit event
  exists for these: os.pidfd_open + signal.pidfd_send_signal would signal any same-user process)
- ptrace, process_vm_readv/writev, setrlimit and prlimit64 with a new limit
- namespaces, mounts, bpf, perf_event_open, io_uring, module loading, kexec, reboot, userfaultfd

Reading files, networking and thread creation stay allowed (the audit hook decides which
files and hosts). Installation uses ctypes and must happen before the audit hook (which
denies ctypes) and before user code runs.
"""

from __future__ import annotations

import os
import platform
import struct

# BPF opcodes
_LD_W_ABS = 0x20
_JEQ_K = 0x15
_JGE_K = 0x35
_JSET_K = 0x45
_RET_K = 0x06

_RET_ALLOW = 0x7FFF0000
_RET_ERRNO = 0x00050000
_EPERM = 1
_ENOSYS = 38

_CLONE_THREAD = 0x00010000
_OPEN_WRITE_FLAGS = 0o1 | 0o2 | 0o100 | 0o1000 | 0o2000  # WRONLY RDWR CREAT TRUNC APPEND

# offsets into struct seccomp_data
_OFF_NR = 0
_OFF_ARCH = 4


def _arg_lo(i: int) -> int:
    return 16 + 8 * i


def _arg_hi(i: int) -> int:
    return 16 + 8 * i + 4


_ARCHES = {
    "x86_64": {
        "audit_arch": 0xC000003E,
        "x32_guard": True,
        "deny": {
            "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "ptrace": 101,
            "process_vm_readv": 310, "process_vm_writev": 311, "setrlimit": 160,
            "tkill": 200, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
            "pivot_root": 155, "chroot": 161, "bpf": 321, "perf_event_open": 298,
            "kexec_load": 246, "kexec_file_load": 320, "init_module": 175,
            "finit_module": 313, "delete_module": 176, "reboot": 169, "userfaultfd": 323,
            "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
            "creat": 85, "rename": 82, "mkdir": 83, "rmdir": 84, "link": 86, "unlink": 87,
            "symlink": 88, "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93,
            "lchown": 94, "truncate": 76, "mknod": 133, "renameat": 264, "mkdirat": 258,
            "mknodat": 259, "fchownat": 260, "unlinkat": 263, "linkat": 265,
            "symlinkat": 266, "fchmodat": 268, "renameat2": 316, "utime": 132,
            "utimes": 235, "utimensat": 280, "futimesat": 261,
            "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
            "process_madvise": 440,
        },
        "enosys": {"clone3": 435, "openat2": 437},
        "clone": 56, "prlimit64": 302,
        # signal senders: allowed only when their first argument is this process
        "self_pid_only": {"kill": 62, "tgkill": 234, "rt_sigqueueinfo": 129,
                          "rt_tgsigqueueinfo": 297},
        # syscall -> index of its flags argument
        "open_flags": {2: 1, 257: 2},
    },
    "aarch64": {
        "audit_arch": 0xC00000B7,
        "x32_guard": False,
        "deny": {
            "execve": 221, "execveat": 281, "ptrace": 117, "process_vm_readv": 270,
            "process_vm_writev": 271, "setrlimit": 164, "tkill": 130, "unshare": 97,
            "setns": 268, "mount": 40, "umount2": 39, "pivot_root": 41, "chroot": 51,
            "bpf": 280, "perf_event_open": 241, "kexec_load": 104, "kexec_file_load": 294,
            "init_module": 105, "finit_module": 273, "delete_module": 106, "reboot": 142,
            "userfaultfd": 282, "io_uring_setup": 425, "io_uring_enter": 426,
            "io_uring_register": 427, "renameat": 38, "mkdirat": 34, "mknodat": 33,
            "fchownat": 54, "unlinkat": 35, "linkat": 37, "symlinkat": 36, "fchmodat": 53,
            "renameat2": 276, "truncate": 45, "utimensat": 88, "fchmod": 52, "fchown": 55,
            "pidfd_send_signal": 424, "pidfd_open": 434, "pidfd_getfd": 438,
            "process_madvise": 440,
        },
        "enosys": {"clone3": 435, "openat2": 437},
        "clone": 220, "prlimit64": 261,
        "self_pid_only": {"kill": 129, "tgkill": 131, "rt_sigqueueinfo": 138,
                          "rt_tgsigqueueinfo": 240},
        "open_flags": {56: 2},
    },
}


def _machine() -> str:
    m = platform.machine().lower()
    return {"amd64": "x86_64", "arm64": "aarch64"}.get(m, m)


def supported() -> bool:
    return os.name == "posix" and platform.system() == "Linux" and _machine() in _ARCHES


class _Asm:
    """Tiny BPF assembler with labels (jump offsets are resolved at the end)."""

    def __init__(self) -> None:
        self.ins: list[tuple] = []
        self.labels: dict[str, int] = {}

    def label(self, name: str) -> None:
        self.labels[name] = len(self.ins)

    def ld(self, offset: int) -> None:
        self.ins.append(("stmt", _LD_W_ABS, offset))

    def ret(self, value: int) -> None:
        self.ins.append(("stmt", _RET_K, value))

    def jump(self, op: int, k: int, jt: str | None, jf: str | None) -> None:
        # None means "fall through to the next instruction"
        self.ins.append(("jump", op, k, jt, jf))

    def assemble(self) -> bytes:
        out = []
        for i, item in enumerate(self.ins):
            if item[0] == "stmt":
                out.append(struct.pack("HBBI", item[1], 0, 0, item[2]))
                continue
            _, op, k, jt, jf = item

            def off(label: str | None) -> int:
                if label is None:
                    return 0
                delta = self.labels[label] - (i + 1)
                if not 0 <= delta <= 255:
                    raise ValueError("bpf jump out of range")
                return delta

            out.append(struct.pack("HBBI", op, off(jt), off(jf), k))
        return b"".join(out)


def build_filter(arch: str, self_pid: int) -> tuple[bytes, int]:
    """The program for `arch` that lets signals reach `self_pid` only, and its length."""
    template, count, pid_offset = _program(arch)
    prog = bytearray(template)
    struct.pack_into("I", prog, pid_offset, self_pid & 0xFFFFFFFF)
    return bytes(prog), count


def _program(arch: str) -> tuple[bytes, int, int]:
    """The program with 0 in place of the process id, its length, and the byte offset of the
    process id (the one part that differs from run to run)."""
    spec = _ARCHES[arch]
    a = _Asm()
    a.ld(_OFF_ARCH)
    a.jump(_JEQ_K, spec["audit_arch"], None, "deny")  # foreign ABI: refuse everything
    a.ld(_OFF_NR)
    if spec["x32_guard"]:
        a.jump(_JGE_K, 0x40000000, "deny", None)
    for nr in spec["deny"].values():
        a.jump(_JEQ_K, nr, "deny", None)
    for nr in spec["enosys"].values():
        a.jump(_JEQ_K, nr, "enosys", None)
    a.jump(_JEQ_K, spec["clone"], "clone", None)
    for nr in spec["self_pid_only"].values():
        a.jump(_JEQ_K, nr, "self_pid", None)
    a.jump(_JEQ_K, spec["prlimit64"], "prlimit", None)
    for nr, argi in spec["open_flags"].items():
        a.jump(_JEQ_K, nr, f"open_{argi}", None)
    a.ret(_RET_ALLOW)

    a.label("clone")
    a.ld(_arg_lo(0))
    a.jump(_JSET_K, _CLONE_THREAD, "allow", "deny")

    a.label("self_pid")
    a.ld(_arg_lo(0))
    pid_at = len(a.ins)
    a.jump(_JEQ_K, 0, "allow", "deny")

    a.label("prlimit")  # prlimit64(pid, resource, new_limit, old_limit): reading is fine
    a.ld(_arg_lo(2))
    a.jump(_JEQ_K, 0, None, "deny")
    a.ld(_arg_hi(2))
    a.jump(_JEQ_K, 0, "allow", "deny")

    for argi in sorted(set(spec["open_flags"].values())):
        a.label(f"open_{argi}")
        a.ld(_arg_lo(argi))
        a.jump(_JSET_K, _OPEN_WRITE_FLAGS, "deny", "allow")

    a.label("allow")
    a.ret(_RET_ALLOW)
    a.label("deny")
    a.ret(_RET_ERRNO | _EPERM)
    a.label("enosys")
    a.ret(_RET_ERRNO | _ENOSYS)
    # Each instruction is struct.pack("HBBI"): 8 bytes, k at offset 4.
    return a.assemble(), len(a.ins), 8 * pid_at + 4


# What installing the filter needs, made once by `prepare()` in the fork server so that a run
# only fills in its process id: (prctl, SockFprog, ctypes, arch, program, length, pid offset).
# Dropped by `forget()` before user code runs (the sandbox takes ctypes away from user code).
_prepared: tuple | None = None


def _tools() -> tuple:
    import ctypes

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    return ctypes.CDLL(None, use_errno=True).prctl, SockFprog, ctypes


def prepare() -> None:
    """In the fork server, once, before the first fork: libc's prctl, the ctypes structure and
    the assembled program. Every run forked afterwards starts with them."""
    global _prepared
    if not supported():
        return
    try:
        arch = _machine()
        _prepared = (*_tools(), arch, *_program(arch))
    except Exception:  # pragma: no cover - depends on the host; install() reports it
        _prepared = None


def forget() -> None:
    """Drops what `prepare()` made (in this process only: each run is a fork of its own)."""
    global _prepared
    _prepared = None


def install() -> tuple[bool, str]:
    """Installs the filter on the calling process (all its threads' future syscalls).
    Returns (installed, detail). Never raises."""
    if not supported():
        return False, f"unsupported platform {platform.system()}/{_machine()}"
    try:
        if _prepared is not None:
            prctl, sock_fprog, ctypes, arch, template, count, pid_offset = _prepared
            prog = bytearray(template)
            struct.pack_into("I", prog, pid_offset, os.getpid() & 0xFFFFFFFF)
        else:
            prctl, sock_fprog, ctypes = _tools()
            arch = _machine()
            prog, count = build_filter(arch, os.getpid())
        buf = ctypes.create_string_buffer(bytes(prog), len(prog))
        fprog = sock_fprog(count, ctypes.cast(buf, ctypes.c_void_p))
        pr_set_no_new_privs, pr_set_seccomp, seccomp_mode_filter = 38, 22, 2
        if prctl(pr_set_no_new_privs, 1, 0, 0, 0) != 0:
            return False, f"prctl(NO_NEW_PRIVS) failed: errno {ctypes.get_errno()}"
        if prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(fprog), 0, 0) != 0:
            return False, f"prctl(SECCOMP) failed: errno {ctypes.get_errno()}"
        return True, f"{arch}, {count} instructions"
    except Exception as exc:  # pragma: no cover - depends on the host
        return False, f"{type(exc).__name__}: {exc}"


def _prctl(option: int, arg: int) -> int | None:
    """prctl(option, arg) through libc; None where there is no prctl. Trusted code only: it
    needs ctypes, which the sandbox takes away from user code."""
    if not supported():
        return None
    try:
        if _prepared is not None:
            return _prepared[0](option, arg, 0, 0, 0)
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl(option, arg, 0, 0, 0)
    except Exception:  # pragma: no cover
        return None


def set_parent_death_signal(sig: int) -> bool:
    """prctl(PR_SET_PDEATHSIG): the child is killed when the fork server dies."""
    return _prctl(1, sig) == 0


def set_dumpable(dumpable: bool) -> bool:
    """prctl(PR_SET_DUMPABLE). Not dumpable, /proc/<pid>/mem, environ, maps and fd of this process
    belong to root and ptrace attach is refused: another process of the same user (a sibling
    run, a compromised child) cannot read its memory or environment. Reset by execve, so every
    process of the runtime calls it itself."""
    return _prctl(4, 1 if dumpable else 0) == 0


def get_dumpable() -> bool | None:
    """prctl(PR_GET_DUMPABLE); None when unknown."""
    value = _prctl(3, 0)
    return None if value is None or value < 0 else bool(value)
