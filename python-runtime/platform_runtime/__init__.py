"""Python runtime for user agents and actions: static checker, sandbox, fork server.

Standard library only; runs on CPython 3.11 and 3.12. See README.md in the parent
directory for the protocol and the sandbox layers.
"""

__all__ = ["policy", "checker", "sandbox", "seccomp", "runner", "zygote", "server", "egress", "redact",
           "platform_calls"]
