"""Run one of the hub's processes so that it ends when the hub ends, however the hub ends.

    python tools/hub_child.py HUB_PID COMMAND [ARGUMENT ...]

hub/jupyterhub_config.py starts the proxy, the idle culler and each learner's
server through this file. JupyterHub starts them in sessions of their own, so
a signal to the hub's process group misses them, and a hub killed by SIGKILL
(or the out-of-memory killer) cannot stop them itself. This asks Linux to send
the command SIGTERM when its parent, the hub, ends (class_hub.die_with_parent),
then becomes the command (exec: same pid, so JupyterHub still watches it).
"""

import os
import sys

from class_hub import die_with_parent

if __name__ == "__main__":
    if len(sys.argv) < 3 or not sys.argv[1].isdigit():
        sys.exit(f"usage: hub_child.py HUB_PID COMMAND [ARGUMENT ...]; got {sys.argv[1:]!r}")
    die_with_parent(int(sys.argv[1]))
    os.execvp(sys.argv[2], sys.argv[2:])
