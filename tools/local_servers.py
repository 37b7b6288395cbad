"""Two things every local server needs, for the tools and the tests alike: a free port, and a deadline."""

import socket
import time
from pathlib import Path


def free_port():
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(ready, timeout, failure, every=0.1, error=TimeoutError):
    """Call ``ready()`` every ``every`` s until it returns something true, and return that.

    After ``timeout`` s without it, raise ``error`` saying that ``failure``
    happened (for example "JupyterHub did not answer"). ``ready`` may raise
    to end the wait early, say when the process it waits for has exited.
    """
    deadline = time.monotonic() + timeout
    while True:
        result = ready()
        if result:
            return result
        if time.monotonic() >= deadline:
            raise error(f"{failure} within {timeout} s")
        time.sleep(every)


def wait_for_answer(process, answers, timeout, name, log):
    """Wait until ``answers()`` is true for the server ``process`` started; return what it returned.

    RuntimeError, with the end of its ``log`` file, if the process exits first;
    TimeoutError after ``timeout`` s. ``answers`` returns something false while
    nothing listens yet (a refused connection is its to catch).
    """
    def ready():
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}; the end of its log ({log}):\n"
                               f"{Path(log).read_text(errors='replace')[-3000:]}")
        return answers()

    return wait_until(ready, timeout, f"{name} (its log: {log}) did not answer", every=0.2)
