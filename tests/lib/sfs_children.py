# Other processes for a Python test program that runs through the preload
# (tests/service/test_service_roundtrips.sh, tests/preload/test_preload_ls_attrs.sh):
# forked and exec'd without the preload and the trace, not started with
# subprocess (its vfork child's closes would reach this process's
# descriptors in the preload). Imported by path: the tests run as a user
# whose environment keeps only a few variables.
import os
import sys


def spawn(argv):
    """Run argv[0] with the arguments argv: its stdin from the pipe whose
    write end comes back (closing it ends the input), its stdout to the
    stream that comes back. (pid, write_fd, out)."""
    env = {k: v for k, v in os.environ.items() if k not in ("STRIPEFS_LOG_MASK", "LD_PRELOAD")}
    rin, win = os.pipe()
    rout, wout = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.dup2(rin, 0)
        os.dup2(wout, 1)
        os.execve(argv[0], argv, env)
    os.close(rin)
    os.close(wout)
    return pid, win, os.fdopen(rout, "rb")


def wait_for(out, word):
    """Read the child's lines until one starts with word (bytes); the test
    fails if it ends first."""
    for line in out:
        if line.startswith(word):
            return
    print("WRONG: the writer ended without %r" % word)
    sys.exit(1)
