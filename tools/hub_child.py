"""Run one of the hub's processes so that it ends when the hub ends, however the hub ends.

    python tools/hub_child.py HUB_PID COMMAND [ARGUMENT ...]

hub/jupyterhub_config.py starts the proxy, the idle culler and each learner's
server through this file. JupyterHub starts them in sessions of their own, so
a signal to the hub's process group misses them, and a hub killed by SIGKILL
(or the out-of-memory killer) cannot stop them itself. This asks Linux to send
the command SIGTERM when its parent, the hub, ends (die_with_parent below,
which tools/class_hub.py also gives the hub itself), then becomes the command
(exec: same pid, so JupyterHub still watches it). It imports nothing of the
project's, so that it runs by its path from any folder.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1  # linux/prctl.h
_LIBC = ctypes.CDLL(None, use_errno=True) if sys.platform.startswith("linux") else None


def die_with_parent(parent_pid):
    """Ask Linux to send this process SIGTERM when its parent ends, however it ends (SIGKILL included).

    Meant for a child between fork and exec (a ``preexec_fn``, or this file
    before it execs): the setting survives exec. If the parent ``parent_pid`` is
    already gone, no signal would ever come, so the process ends at once. Elsewhere
    than Linux only the SIGINT step below is done: the hub's own clean-up is all there is.

    It also gives SIGINT its default action back. A shell that starts `make hub &`
    in the background ignores SIGINT in it, and every process inherits that;
    JupyterHub stops the culler and each server with SIGINT first and waits 10 s
    before SIGTERM, so its clean-up took 30 s (measured) instead of 3.
    """
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    if _LIBC is None:
        return
    if _LIBC.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0) != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"prctl(PR_SET_PDEATHSIG): {os.strerror(error)}")
    if os.getppid() != parent_pid:
        os.kill(os.getpid(), signal.SIGTERM)


if __name__ == "__main__":
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(f"usage: hub_child.py HUB_PID COMMAND [ARGUMENT ...]; got {sys.argv[1:]!r}")
    die_with_parent(int(sys.argv[1]))
    os.execvp(sys.argv[2], sys.argv[2:])
