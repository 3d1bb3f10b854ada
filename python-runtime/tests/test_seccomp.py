"""The seccomp filter's decisions, for both architectures, by running the assembled BPF program
on a small interpreter (the kernel's own check is in the escape corpus, where seccomp exists)."""

from __future__ import annotations

import struct
import unittest

from platform_runtime import seccomp

ALLOW = 0x7FFF0000
EPERM = 0x00050000 | 1
ENOSYS = 0x00050000 | 38
SELF = 4242
OTHER = 4243


def run_filter(arch: str, nr: int, args: tuple[int, ...] = (), audit_arch: int | None = None) -> int:
    """The filter's verdict for one system call (struct seccomp_data, little endian)."""
    prog, count = seccomp.build_filter(arch, SELF)
    ins = [struct.unpack_from("HBBI", prog, 8 * i) for i in range(count)]
    arch_id = seccomp._ARCHES[arch]["audit_arch"] if audit_arch is None else audit_arch
    data = struct.pack("<iIQ6Q", nr, arch_id, 0, *(list(args) + [0] * (6 - len(args))))
    acc, pc = 0, 0
    for _step in range(len(ins) + 1):  # no loops in cBPF: every jump goes forward
        code, jt, jf, k = ins[pc]
        if code == 0x20:  # ld [k]
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == 0x06:  # ret k
            return k
        elif code in (0x15, 0x35, 0x45):  # jeq, jge, jset
            taken = {0x15: acc == k, 0x35: acc >= k, 0x45: bool(acc & k)}[code]
            pc += 1 + (jt if taken else jf)
        else:
            raise AssertionError(f"unexpected BPF opcode {code:#x}")
    raise AssertionError("the filter did not return")


SYSCALLS = {
    "x86_64": {"read": 0, "openat": 257, "execve": 59, "ptrace": 101, "process_vm_readv": 310,
               "process_vm_writev": 311, "pidfd_open": 434, "pidfd_send_signal": 424,
               "pidfd_getfd": 438, "process_madvise": 440, "kill": 62, "tgkill": 234,
               "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "clone3": 435},
    "aarch64": {"read": 63, "openat": 56, "execve": 221, "ptrace": 117, "process_vm_readv": 270,
                "process_vm_writev": 271, "pidfd_open": 434, "pidfd_send_signal": 424,
                "pidfd_getfd": 438, "process_madvise": 440, "kill": 129, "tgkill": 131,
                "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "clone3": 435},
}


class SeccompFilterTest(unittest.TestCase):
    def test_process_handles_and_memory_of_others_are_refused(self) -> None:
        for arch, nrs in SYSCALLS.items():
            for name in ("pidfd_open", "pidfd_send_signal", "pidfd_getfd", "process_madvise",
                         "ptrace", "process_vm_readv", "process_vm_writev", "execve"):
                with self.subTest(arch=arch, syscall=name):
                    self.assertEqual(run_filter(arch, nrs[name], (SELF,)), EPERM)

    def test_signals_only_to_this_process(self) -> None:
        for arch, nrs in SYSCALLS.items():
            for name in ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo"):
                with self.subTest(arch=arch, syscall=name):
                    self.assertEqual(run_filter(arch, nrs[name], (OTHER, 9)), EPERM)
                    self.assertEqual(run_filter(arch, nrs[name], (SELF, 9)), ALLOW)

    def test_ordinary_calls_pass_and_writes_do_not(self) -> None:
        o_wronly = 0o1
        for arch, nrs in SYSCALLS.items():
            with self.subTest(arch=arch):
                self.assertEqual(run_filter(arch, nrs["read"], (0,)), ALLOW)
                self.assertEqual(run_filter(arch, nrs["openat"], (0, 0, 0)), ALLOW)
                self.assertEqual(run_filter(arch, nrs["openat"], (0, 0, o_wronly)), EPERM)
                self.assertEqual(run_filter(arch, nrs["clone3"]), ENOSYS)

    def test_a_foreign_abi_is_refused_outright(self) -> None:
        self.assertEqual(run_filter("x86_64", 0, audit_arch=0x40000003), EPERM)  # i386
        self.assertEqual(run_filter("x86_64", 0x40000000 | 0), EPERM)  # x32


if __name__ == "__main__":
    unittest.main()
