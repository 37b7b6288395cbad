"""A JupyterHub for a class, on 127.0.0.1: what `make hub` runs, and what the tests start.

    python tools/class_hub.py [--repo build/learner-repo] [--port 8000] [--state hub/state]

It starts JupyterHub with hub/jupyterhub_config.py (configurable-http-proxy from
npm, a shared class password, local single-user servers with nbgitpuller,
jupyterhub-idle-culler), waits until the hub answers, then prints its URL, how
to log in, and the nbgitpuller link that opens chapter 00 of the content
repository. Ctrl+C stops it and every server it started.

The passwords come from ATTN_HUB_PASSWORD (8 characters or more) and
ATTN_HUB_ADMIN_PASSWORD (32 or more); unset, new ones are made and printed.
"""

import argparse
import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlencode

import psutil
import requests

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "hub" / "jupyterhub_config.py"
PROXY = REPO / ".venv" / "chp" / "node_modules" / ".bin" / "configurable-http-proxy"
# The learners' homes live here: outside build/, which `make clean` removes.
DEFAULT_STATE = REPO / "hub" / "state"
DEFAULT_CONTENT = REPO / "build" / "learner-repo"
BRANCH = "learner"
FIRST_CHAPTER = "00_start_here.ipynb"
ADMIN = "instructor"
USER_PASSWORD_MIN, ADMIN_PASSWORD_MIN = 8, 32


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def nbgitpuller_link(hub_url, repo, path=FIRST_CHAPTER, branch=BRANCH, app="lab"):
    """The link a class follows: clone or update ``repo`` into the learner's home, then open ``path``.

    nbgitpuller puts the repository in a folder named after its last path
    component, so the notebook opens at ``<that folder>/<path>``.
    """
    folder = str(repo).rstrip("/").split("/")[-1]
    query = urlencode({"repo": str(repo), "branch": branch, "urlpath": f"{app}/tree/{folder}/{path}"})
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


def _check_password(name, value, minimum):
    if not isinstance(value, str) or len(value) < minimum:
        shown = "missing" if not value else f"{len(value)} characters"
        raise ValueError(f"{name}: expected a password of at least {minimum} characters, got {shown}")


class Hub:
    """A running JupyterHub process; ``stop()`` ends it and the servers it spawned."""

    def __init__(self, state, port=8000, password=None, admin_password=None, cull_timeout=3600, cull_every=60,
                 log=None):
        if not PROXY.exists():
            raise FileNotFoundError(f"configurable-http-proxy is not installed at {PROXY}: run `make install-hub`")
        if not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"port: expected an integer from 1 to 65535, got {port!r}")
        self.password = password or secrets.token_urlsafe(12)
        self.admin_password = admin_password or secrets.token_urlsafe(32)
        _check_password("password", self.password, USER_PASSWORD_MIN)
        _check_password("admin_password", self.admin_password, ADMIN_PASSWORD_MIN)
        self.state, self.port = Path(state), port
        self.url = f"http://127.0.0.1:{port}"
        self.state.mkdir(parents=True, exist_ok=True)
        env = {**os.environ, "ATTN_HUB_STATE": str(self.state.resolve()), "ATTN_HUB_PORT": str(port),
               "ATTN_HUB_API_PORT": str(free_port()), "ATTN_HUB_PROXY_API_PORT": str(free_port()),
               "ATTN_HUB_PROXY": str(PROXY), "ATTN_HUB_PASSWORD": self.password,
               "ATTN_HUB_ADMIN_PASSWORD": self.admin_password, "ATTN_HUB_ADMIN": ADMIN,
               "ATTN_HUB_CULL_TIMEOUT": str(cull_timeout), "ATTN_HUB_CULL_EVERY": str(cull_every)}
        command = [str(Path(sys.executable).with_name("jupyterhub")), "-f", str(CONFIG)]
        self.log_path = Path(log) if log else self.state / "jupyterhub.log"
        self._log = open(self.log_path, "ab")
        # Its own process group, so that stop() reaches the proxy and the servers too.
        self.process = subprocess.Popen(command, cwd=self.state, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True)
        self._started = []  # what the hub had started when it answered: its proxy and idle culler among them

    def wait_ready(self, timeout=90):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"JupyterHub exited with {self.process.returncode}; its log: {self.log_path}")
            try:
                if requests.get(f"{self.url}/hub/api/", timeout=2).ok:
                    self._started = self._descendants()
                    return self
            except requests.ConnectionError:
                pass
            time.sleep(0.3)
        raise TimeoutError(f"JupyterHub did not answer at {self.url} within {timeout} s; its log: {self.log_path}")

    def stop(self, timeout=30):
        """SIGTERM to the hub (it stops the servers it spawned), then to whatever is left of what it started.

        The proxy and the idle culler run in sessions of their own, out of reach
        of the hub's process group; if the hub exits without stopping them (as
        it once did at the end of the load test), they are found in the lists
        of the hub's processes taken when it answered and when stop() began,
        and stopped here.
        """
        started = {process.pid: process for process in self._started + self._descendants()}.values()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        try:
            os.killpg(self.process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        left = [process for process in started if _running(process)]
        for process in left:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.terminate()
        for process in psutil.wait_procs(left, timeout=5)[1]:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        self._log.close()

    def _descendants(self):
        try:
            return psutil.Process(self.process.pid).children(recursive=True)
        except psutil.NoSuchProcess:
            return []


def _running(process):
    """Whether ``process`` (a psutil.Process) still runs: not ended, not reused, not a zombie."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(DEFAULT_CONTENT),
                        help="content repository for the nbgitpuller link (a path or URL; default %(default)s)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="the hub's database, logs and homes")
    parser.add_argument("--cull-timeout", type=int, default=3600, help="stop servers idle this many seconds")
    args = parser.parse_args(argv)
    if "://" not in args.repo and not (Path(args.repo) / ".git").exists():
        sys.exit(f"error: --repo {args.repo}: expected a git repository or a URL; make one with `make learner-repo`")
    repo = args.repo if "://" in args.repo else str(Path(args.repo).resolve())
    try:
        hub = Hub(args.state, args.port, os.environ.get("ATTN_HUB_PASSWORD"),
                  os.environ.get("ATTN_HUB_ADMIN_PASSWORD"), cull_timeout=args.cull_timeout)
    except (ValueError, FileNotFoundError) as error:
        sys.exit(f"error: {error}")
    # A plain kill of this command (SIGTERM) stops the hub too: the hub runs in its own session.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        hub.wait_ready()
        print(f"""
JupyterHub is running at {hub.url}/ (127.0.0.1 only; log: {hub.log_path})
  Learners: any user name, password {hub.password}
  Instructor (admin): user name {ADMIN}, password {hub.admin_password}
  Idle servers stop after {args.cull_timeout} s.
The class link (clones or updates {repo}, branch {BRANCH}, then opens chapter 00):
  {nbgitpuller_link(hub.url, repo)}
Press Ctrl+C to stop the hub and every learner's server.""", flush=True)
        hub.process.wait()
    except KeyboardInterrupt:
        pass
    except (RuntimeError, TimeoutError) as error:
        print(f"error: {error}", file=sys.stderr)
    finally:
        hub.stop()


if __name__ == "__main__":
    main()
