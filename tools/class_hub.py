"""A JupyterHub for a class, on 127.0.0.1: what `make hub` runs, and what the tests start.

    python -m tools.class_hub [--repo build/learner-repo] [--port 8000] [--state hub/state]
    python -m tools.class_hub --stop [--state hub/state]      (make hub-stop)

It starts JupyterHub with hub/jupyterhub_config.py (configurable-http-proxy from
npm, a shared class password, local single-user servers with nbgitpuller,
jupyterhub-idle-culler), waits until the hub answers and both passwords log in,
then prints its URL, how to log in, and the nbgitpuller link that opens chapter
00 of the content repository. Ctrl+C, SIGTERM or SIGKILL of this command stops
the hub and every process it started, and so does the end of the process that
started it, or a signal to make when make runs it (docs/hub.md, "When something
breaks"). A second start from the same state folder, or on a port in use, is
refused with exit status 2. The hub and `--stop` signal only processes that
their pid files show to be this hub's (tools/hub_processes.py).

The passwords come from ATTN_HUB_PASSWORD (8 characters or more) and
ATTN_HUB_ADMIN_PASSWORD (32 or more); unset, new ones are made and printed.

    python -m tools.class_hub --lti hub/lti.json      (make hub LTI=hub/lti.json)

starts it for launches from an LMS instead (LTI 1.3, docs/lms.md): no password
logs in, and it prints the URLs the LMS's tool screen asks for.
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

from tools.hub_child import die_with_parent
from tools.hub_processes import ParentWatch, forget_server_pids, recorded_process, running
from tools.learner_repo import BRANCH
from tools.local_servers import free_port, wait_for_answer, wait_until

REPO = Path(__file__).resolve().parent.parent
CONFIG = REPO / "hub" / "jupyterhub_config.py"
PROXY = REPO / ".venv" / "chp" / "node_modules" / ".bin" / "configurable-http-proxy"
# The learners' homes live here: outside build/, which `make clean` removes.
DEFAULT_STATE = REPO / "hub" / "state"
DEFAULT_CONTENT = REPO / "build" / "learner-repo"
FIRST_CHAPTER = "00_start_here.ipynb"
ADMIN = "instructor"
# The user the start-up check logs in with the class password; it is deleted again at once.
PASSWORD_CHECK_USER = "password-check"
USER_PASSWORD_MIN, ADMIN_PASSWORD_MIN = 8, 32
# This command's pid, beside JupyterHub's own jupyterhub.pid and its proxy's, in the state folder.
PID_FILE = "class_hub.pid"
HUB_PID_FILE = "jupyterhub.pid"
PROXY_PID_FILE = "jupyterhub-proxy.pid"
DATABASE = "jupyterhub.sqlite"
# The exit status of a start refused before any hub runs (a hub already running, the port taken, a bad
# setting), as argparse's for a bad argument; 1 is a hub that failed once started. make's own is 2 for both.
REFUSED = 2


def class_size(cores, memory_bytes):
    """How many learners' servers may run at once: the capacity table of docs/instructors.md.

    Five learners a core (CPU), 0.65 GB each after 1.5 GB for the system and the hub
    (memory), and never more than 100 (The Littlest JupyterHub's own scale); at least one.
    """
    by_memory = int((memory_bytes / 1e9 - 1.5) / 0.65)
    return max(1, min(5 * cores, by_memory, 100))


def port_in_use(port):
    """None if 127.0.0.1:``port`` is free to listen on; otherwise what holds it, as words."""
    with socket.socket() as probe:
        # Connections of an earlier hub waiting out TIME_WAIT do not make the port busy; a listener does.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
            return None
        except OSError:
            pass
    with contextlib.suppress(psutil.AccessDenied):
        for connection in psutil.net_connections("tcp"):
            if connection.laddr.port == port and connection.status == psutil.CONN_LISTEN and connection.pid:
                with contextlib.suppress(psutil.Error):
                    return f"pid {connection.pid}: {' '.join(psutil.Process(connection.pid).cmdline())[:200]}"
    return "another program"


def recorded(state, name):
    """The process whose pid is in ``state/name``, one of the hub's pid files, if it is still this hub's.

    hub_processes.recorded_process decides, given what each file's process runs
    and where: this command (`python -m tools.class_hub`, from this checkout),
    JupyterHub with this checkout's config, and this checkout's proxy, both in
    the state folder.
    """
    state = Path(state)
    arguments, folder = {PID_FILE: (["-m", "tools.class_hub"], REPO),
                         HUB_PID_FILE: (["-f", CONFIG], state),
                         PROXY_PID_FILE: ([PROXY], state)}[name]
    return recorded_process(state / name, arguments, folder)


def running_hub(state):
    """The processes of a hub started from ``state`` that still run: this command's, then JupyterHub's."""
    return [process for process in (recorded(state, PID_FILE), recorded(state, HUB_PID_FILE)) if process]


def forget_earlier_hub(state):
    """Leave nothing of an earlier hub from ``state`` for a new one to signal; only while no hub runs from it.

    The proxy and the learners' servers ended with that hub (tools/hub_child.py).
    A proxy that runs all the same is ended here if its pid file shows it is this
    hub's. Then the pid files go, and the servers' pids leave the database
    (hub_processes.forget_server_pids): at its start, JupyterHub signals a
    proxy whose pid file it finds, and a server whose pid its database holds,
    whatever process has that pid by then. Returns the servers' pids dropped.
    """
    proxy = recorded(state, PROXY_PID_FILE)
    if proxy:
        end([proxy], 5)
    for name in (PID_FILE, HUB_PID_FILE, PROXY_PID_FILE):
        with contextlib.suppress(FileNotFoundError):
            (Path(state) / name).unlink()
    return forget_server_pids(Path(state) / DATABASE)


def end(processes, timeout):
    """SIGTERM to each process; SIGKILL to those still running ``timeout`` s later. Returns those killed."""
    processes = [process for process in processes if running(process)]
    for process in processes:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.terminate()
    # Not psutil.wait_procs: it waits out a zombie (ended, not yet reaped by its parent) as if it still ran.
    with contextlib.suppress(TimeoutError):  # what is still running then is killed below
        wait_until(lambda: not any(running(process) for process in processes), timeout, "the processes did not end")
    alive = [process for process in processes if running(process)]
    for process in alive:
        with contextlib.suppress(psutil.NoSuchProcess):
            process.kill()
    return alive


def stop_running_hub(state, timeout=45):
    """What `make hub-stop` does: end the hub started from ``state``, and everything it started.

    This command first (its clean-up stops the hub), then JupyterHub (its own
    clean-up stops the servers and the proxy), each with SIGKILL if it is still
    running ``timeout`` s later; then whatever they had started that is left,
    and what an earlier hub left behind (forget_earlier_hub). A pid file counts
    only when its process is this hub's (recorded). Returns the pids it found running.
    """
    found = running_hub(state)
    started = {child.pid: child for process in found for child in _children(process)}
    for process in found:
        end([process], timeout)
    end(started.values(), 5)
    forget_earlier_hub(state)
    return [process.pid for process in found]


def _children(process):
    try:
        return process.children(recursive=True)
    except psutil.NoSuchProcess:
        return []


def nbgitpuller_link(hub_url, repo, path=FIRST_CHAPTER, branch=BRANCH, app="lab"):
    """The link a class follows: clone or update ``repo`` into the learner's home, then open ``path``.

    nbgitpuller puts the repository in a folder named after its last path
    component, so the notebook opens at ``<that folder>/<path>``.
    """
    folder = str(repo).rstrip("/").split("/")[-1]
    query = urlencode({"repo": str(repo), "branch": branch, "urlpath": f"{app}/tree/{folder}/{path}"})
    return f"{hub_url.rstrip('/')}/hub/user-redirect/git-pull?{query}"


LTI_KEY_SET_PATH = "/hub/lti13/jwks"


def lti_registration(path):
    """The checked LTI registration in ``path`` (docs/lms.md), or None without one: the shared password then."""
    if path is None:
        return None
    from tools.lti import load_registration  # here: PyJWT and cryptography load for an LTI hub only

    return load_registration(path)


def lti_banner(hub_url, repo):
    """What `make hub LTI=…` prints: the URLs the LMS's tool screen asks for, and a chapter's launch link."""
    return f"""
JupyterHub is running at {hub_url}/ (127.0.0.1 only), for launches from the LMS (LTI 1.3, docs/lms.md).
No password logs in: learners and instructors launch from the LMS. For the LMS's tool screen:
  Login initiation (OIDC login) URL: {hub_url}/hub/lti13/oauth_login
  Redirect (launch) URL:             {hub_url}/hub/lti13/oauth_callback
  Public key set (JWKS) URL:         {hub_url}{LTI_KEY_SET_PATH}
  Target link URI of an assignment, here chapter 00 (its nbgrader assignment: ch00, unless the link's
  custom parameter assignment=… names another):
  {nbgitpuller_link(hub_url, repo)}
Press Ctrl+C to stop the hub and every learner's server."""


def _check_password(name, value, minimum):
    if not isinstance(value, str) or len(value) < minimum:
        shown = "missing" if not value else f"{len(value)} characters"
        raise ValueError(f"{name}: expected a password of at least {minimum} characters, got {shown}")


class HubRunning(RuntimeError):
    """A hub already runs from this state folder, or something else listens on the port."""


class Hub:
    """A running JupyterHub process; ``stop()`` ends it and everything it started.

    Refused (HubRunning) when a hub started from ``state`` still runs or the port
    is taken. Linux ends the hub when the process that made this object ends,
    however it ends (die_with_parent); hub/jupyterhub_config.py ties the proxy,
    the idle culler and the learners' servers to the hub the same way.
    """

    def __init__(self, state, port=8000, password=None, admin_password=None, cull_timeout=3600, cull_every=60,
                 log=None, max_servers=None, proxy_check=5, lti=None):
        if not PROXY.exists():
            raise FileNotFoundError(f"configurable-http-proxy is not installed at {PROXY}: run `make install-hub`")
        if not isinstance(port, int) or not 0 < port < 65536:
            raise ValueError(f"port: expected an integer from 1 to 65535, got {port!r}")
        max_servers = max_servers or class_size(os.cpu_count() or 1, psutil.virtual_memory().total)
        if not isinstance(max_servers, int) or max_servers < 1:
            raise ValueError(f"max_servers: expected a whole number of learners, 1 or more, got {max_servers!r}")
        if not isinstance(proxy_check, int) or proxy_check < 1:
            raise ValueError(f"proxy_check: expected whole seconds, 1 or more, got {proxy_check!r}")
        self.password = password or secrets.token_urlsafe(12)
        self.admin_password = admin_password or secrets.token_urlsafe(32)
        _check_password("password", self.password, USER_PASSWORD_MIN)
        _check_password("admin_password", self.admin_password, ADMIN_PASSWORD_MIN)
        self.state, self.port, self.max_servers = Path(state), port, max_servers
        self.lti = lti_registration(lti)
        self.url = f"http://127.0.0.1:{port}"
        already = running_hub(self.state)
        if already:
            raise HubRunning(f"a hub started from {self.state} is still running (pid "
                             f"{', '.join(str(process.pid) for process in already)}): stop it with Ctrl+C in the "
                             f"terminal it runs in, or with `make hub-stop` (python -m tools.class_hub --stop "
                             f"--state {self.state})")
        holder = port_in_use(port)
        if holder:
            raise HubRunning(f"port {port} is in use ({holder}): stop that program (`make hub-stop` stops a hub "
                             f"left running from {self.state}), or choose another port: make hub HUB_PORT=8010")
        self.state.mkdir(parents=True, exist_ok=True)
        forget_earlier_hub(self.state)
        env = {**os.environ, "ATTN_HUB_STATE": str(self.state.resolve()), "ATTN_HUB_PORT": str(port),
               "ATTN_HUB_API_PORT": str(free_port()), "ATTN_HUB_PROXY_API_PORT": str(free_port()),
               "ATTN_HUB_PROXY": str(PROXY), "ATTN_HUB_PASSWORD": self.password,
               "ATTN_HUB_ADMIN_PASSWORD": self.admin_password, "ATTN_HUB_ADMIN": ADMIN,
               "ATTN_HUB_CULL_TIMEOUT": str(cull_timeout), "ATTN_HUB_CULL_EVERY": str(cull_every),
               "ATTN_HUB_MAX_SERVERS": str(max_servers), "ATTN_HUB_PROXY_CHECK": str(proxy_check),
               "ATTN_HUB_LTI": str(Path(lti).resolve()) if lti else ""}
        command = [str(Path(sys.executable).with_name("jupyterhub")), "-f", str(CONFIG)]
        self.log_path = Path(log) if log else self.state / "jupyterhub.log"
        self._log = open(self.log_path, "ab")
        # A session of its own: Ctrl+C in the terminal reaches this command only, which stops the hub in order.
        parent = os.getpid()
        self.process = subprocess.Popen(command, cwd=self.state, env=env, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=lambda: die_with_parent(parent))
        self._started = []  # what the hub had started when it answered: its proxy and idle culler among them

    def wait_ready(self, timeout=90):
        """Wait until the hub answers, then log in with both passwords: what is printed has been tried."""
        def answered():
            try:
                return requests.get(f"{self.url}/hub/api/", timeout=2).ok
            except requests.ConnectionError:
                return False

        wait_for_answer(self.process, answered, timeout, f"JupyterHub at {self.url}", self.log_path)
        self._started = self._descendants()
        if self.lti:
            self._check_key_set()
        else:
            self._check_passwords()
        return self

    def _check_key_set(self):
        """With an LTI registration no password logs in: check that the tool's key set is served instead."""
        from tools.hub_client import HubError

        response = requests.get(f"{self.url}{LTI_KEY_SET_PATH}", timeout=30)
        if not response.ok or not response.json().get("keys"):
            raise HubError(f"the tool's key set at {self.url}{LTI_KEY_SET_PATH}: HTTP {response.status_code}: "
                           f"{response.text[:300]}")

    def _check_passwords(self):
        """Log in as the instructor, and as a learner (a user deleted again at once); HubError if either fails."""
        from tools.hub_client import HubError, log_in  # here: nbformat, which it imports, takes a second to load

        admin = log_in(requests.Session(), self.url, ADMIN, self.admin_password)
        log_in(requests.Session(), self.url, PASSWORD_CHECK_USER, self.password)
        response = admin.delete(f"{self.url}/hub/api/users/{PASSWORD_CHECK_USER}", timeout=30,
                                headers={"X-XSRFToken": admin.cookies.get("_xsrf", path="/hub/")})
        if response.status_code != 204:
            raise HubError(f"deleting the user {PASSWORD_CHECK_USER!r} after the password check: "
                           f"HTTP {response.status_code}: {response.text[:300]}")

    def stop(self, timeout=30):
        """SIGTERM to the hub (it stops the servers it spawned), then to whatever is left of what it started.

        The proxy, the idle culler and the servers run in sessions of their own,
        out of reach of the hub's process group. They end when the hub ends
        (hub/jupyterhub_config.py); whatever is left all the same is found in
        the lists of the hub's processes taken when it answered and when stop()
        began, and stopped here.
        """
        started = {process.pid: process for process in self._started + self._descendants()}.values()
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        end(started, 5)
        self._log.close()

    def _descendants(self):
        try:
            return _children(psutil.Process(self.process.pid))
        except psutil.NoSuchProcess:
            return []


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", default=str(DEFAULT_CONTENT),
                        help="content repository for the nbgitpuller link (a path or URL; default %(default)s)")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--state", type=Path, default=DEFAULT_STATE, help="the hub's database, logs and homes")
    parser.add_argument("--cull-timeout", type=int, default=3600, help="stop servers idle this many seconds")
    parser.add_argument("--max-servers", type=int, default=None,
                        help="learners' servers at once (default: the capacity table's figure for this machine)")
    parser.add_argument("--stop", action="store_true", help="stop the hub left running from --state, and exit")
    parser.add_argument("--lti", type=Path, default=None,
                        help="an LTI 1.3 registration (docs/lms.md): learners launch from the LMS, no password")
    args = parser.parse_args(argv)
    parent = ParentWatch()  # at once: make may be told to stop while the hub is still starting
    if args.stop:
        stopped = stop_running_hub(args.state)
        print(f"Stopped the hub started from {args.state} (pid {', '.join(map(str, stopped))})." if stopped
              else f"No hub started from {args.state} is running.")
        return
    if "://" not in args.repo and not (Path(args.repo) / ".git").exists():
        _refuse(f"--repo {args.repo}: expected a git repository or a URL; make one with `make learner-repo`")
    repo = args.repo if "://" in args.repo else str(Path(args.repo).resolve())
    try:
        hub = Hub(args.state, args.port, os.environ.get("ATTN_HUB_PASSWORD"),
                  os.environ.get("ATTN_HUB_ADMIN_PASSWORD"), cull_timeout=args.cull_timeout,
                  max_servers=args.max_servers, lti=args.lti)
    except (ValueError, FileNotFoundError, HubRunning) as error:
        _refuse(error)
    pid_file = Path(args.state) / PID_FILE
    pid_file.write_text(f"{os.getpid()}\n")
    # SIGTERM ends this command through its clean-up below; SIGKILL reaches the hub through die_with_parent.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    failed = None
    try:
        hub.wait_ready()
        print(lti_banner(hub.url, repo) if hub.lti else f"""
JupyterHub is running at {hub.url}/ (127.0.0.1 only; log: {hub.log_path})
  Learners: any user name, password {hub.password}
  Instructor (admin): user name {ADMIN}, password {hub.admin_password}
  (both passwords were just tried on the login page)
  Up to {hub.max_servers} learners' servers at once; idle servers stop after {args.cull_timeout} s.
The class link (clones or updates {repo}, branch {BRANCH}, then opens chapter 00):
  {nbgitpuller_link(hub.url, repo)}
Press Ctrl+C here to stop the hub and every learner's server; from another terminal: \
{_stop_command(args.state)}.""", flush=True)
        ended = None
        while hub.process.poll() is None and not ended:
            ended = parent.ended()
            time.sleep(0.5)
        if ended:
            with contextlib.suppress(OSError):  # the terminal may be gone with the parent
                print(f"Stopping the hub: {ended}.", flush=True)
        else:
            failed = (f"JupyterHub exited with {hub.process.returncode}; its log: {hub.log_path}. "
                      "Start it again: make hub")
    except KeyboardInterrupt:
        pass
    except (RuntimeError, TimeoutError) as error:
        failed = str(error)
    finally:
        hub.stop()
        with contextlib.suppress(FileNotFoundError):
            pid_file.unlink()
    if failed:
        sys.exit(f"error: {failed}")


def _refuse(error):
    print(f"error: {error}", file=sys.stderr)
    sys.exit(REFUSED)


def _stop_command(state):
    """How to stop a hub started from ``state`` from any terminal."""
    if Path(state).resolve() == DEFAULT_STATE:
        return "make hub-stop"
    return f"make hub-stop HUB_STATE={state}"


if __name__ == "__main__":
    main()
