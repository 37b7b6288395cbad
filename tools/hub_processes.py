"""Which processes belong to a class hub, so that the hub and `make hub-stop` never signal anyone else's.

A hub killed outright (SIGKILL, the out-of-memory killer) leaves its pid files
and its database behind. Once the system gives one of those pids to a new
process, a pid alone names a stranger: `make hub-stop` would end it, and
JupyterHub, at its next start, would signal it as its old proxy or as a
learner's old server. So:

- ``recorded_process`` is the one test of a pid file, for every reader of one:
  the process must have this hub's command line, run in this hub's folder, and
  be older than the file (a reused pid belongs to a process that started after
  the file was written);
- ``forget_server_pids`` drops the learners' servers' pids from the hub's
  database before a start, so that JupyterHub finds their servers stopped
  instead of polling, waiting for and then signalling whatever has that pid now;
- ``ParentWatch`` tells `make hub`'s command when the make that runs it has died,
  or has been told to stop (make passes SIGINT on to nobody: see its docstring).
"""

import os
import signal
from pathlib import Path

import psutil

# The signals that end make. On each, make's handler first gives the signal back its
# default action, then waits for its recipe's command to end before it ends itself.
MAKE_STOPS_ON = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM)
MAKE_NAMES = ("make", "gmake")


def running(process):
    """Whether ``process`` (a psutil.Process) still runs: not ended, not reused, not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def recorded_process(pid_file, arguments, folder):
    """The process whose pid ``pid_file`` holds, if it is still the one that wrote it there; otherwise None.

    It counts only when all of these hold:

    - it runs (an ended process, or a zombie, does not count);
    - its command line holds ``arguments`` one after another, each equal as a
      whole (so that a path names this checkout, and a longer path that merely
      contains it does not);
    - its working folder is ``folder``;
    - it started before ``pid_file`` was last written. A pid the system gave
      again to a newer process fails here, whatever its command line says.

    A process of another user, whose command line or folder cannot be read, does not count.
    """
    try:
        with open(pid_file) as recorded:
            written = os.fstat(recorded.fileno()).st_mtime
            pid = int(recorded.read().split()[0])
        process = psutil.Process(pid)
        command = process.cmdline()
        arguments = [str(argument) for argument in arguments]
        in_a_row = any(command[start:start + len(arguments)] == arguments for start in range(len(command)))
        # psutil counts a start from the boot time in whole seconds, rounded down: a process looks
        # up to a second older than it is, never younger, so the process that wrote the file passes.
        if (in_a_row and Path(process.cwd()) == Path(folder).resolve() and process.create_time() <= written
                and running(process)):
            return process
    except (OSError, ValueError, IndexError, psutil.Error):
        pass  # no file, no pid in it, or no such process of ours
    return None


def forget_server_pids(database):
    """Drop the pid of every learner's server from the hub's ``database``; return the pids dropped.

    For a server the database still lists as running, JupyterHub's local
    spawner keeps its pid in the spawner's state, and a new hub signals that
    pid (0 to poll it, then SIGINT, SIGTERM and SIGKILL to stop it). Without
    the pid, JupyterHub finds the server stopped "while the Hub was down" and
    cleans up after it (its route, its token) without signalling anything.
    Only for a database no running hub uses: the caller checks that.
    """
    if not Path(database).exists():
        return []
    from jupyterhub import orm  # here: SQLAlchemy takes a while to load, and only a hub's start needs it

    session = orm.new_session_factory(f"sqlite:///{database}")()
    try:
        dropped = []
        for spawner in session.query(orm.Spawner):
            if spawner.state and "pid" in spawner.state:
                dropped.append(spawner.state["pid"])
                spawner.state = {key: value for key, value in spawner.state.items() if key != "pid"}
        session.commit()
        return dropped
    finally:
        session.close()
        session.get_bind().dispose()


def caught_signals(pid):
    """The signals process ``pid`` has a handler for, from /proc (Linux); None where it cannot tell."""
    try:
        with open(f"/proc/{pid}/status") as status:
            mask = next(int(line.split()[1], 16) for line in status if line.startswith("SigCgt:"))
    except (OSError, StopIteration, ValueError):
        return None
    return {number for number in range(1, 65) if mask & (1 << (number - 1))}


class ParentWatch:
    """Whether the process that started this one has ended, or, for make, has been told to stop.

    A signal sent to make's process alone (``kill -INT``, a task runner that
    stops make and nothing else) never reaches its recipe: make passes SIGTERM
    on, but on SIGINT, SIGHUP or SIGQUIT it only waits for the recipe's command
    to end, which a hub never does by itself. What can be seen from outside is
    that make's handler has given the signal its default action back: /proc
    then no longer lists it among make's caught signals.
    """

    def __init__(self):
        self.parent = os.getppid()
        try:
            self.make = psutil.Process(self.parent).name() in MAKE_NAMES
        except psutil.Error:
            self.make = False
        self.caught = (caught_signals(self.parent) or set()) & set(MAKE_STOPS_ON) if self.make else set()

    def ended(self):
        """Why this process should stop now, in words, or None while its parent runs on."""
        if os.getppid() != self.parent:
            return f"the process that started it (pid {self.parent}) has ended"
        caught = caught_signals(self.parent) if self.caught else None
        dropped = self.caught - caught if caught is not None else set()
        if dropped:
            return f"make (pid {self.parent}) got {signal.Signals(min(dropped)).name}"
        return None
