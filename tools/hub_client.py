"""A simulated learner on a JupyterHub, through the hub's REST API and the kernel websocket.

Used by the class test (tests/test_hub_class.py) and the load test
(benchmarks/hub_load.py). A learner logs in through the hub's login form,
starts a server, follows an nbgitpuller link (the same redirects and event
stream a browser gets), runs a notebook cell by cell in a real kernel, and
saves it through the contents API, as JupyterLab does.
"""

import json
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import nbformat
import requests
import websocket
from jupyter_client.session import Session
from jupyter_server.services.kernels.connection.base import deserialize_msg_from_ws_v1, serialize_msg_to_ws_v1

from tools.local_servers import wait_until


class HubError(RuntimeError):
    """A step of the simulated learner failed; the message says which and what the hub answered."""


def _expect(response, what):
    if not response.ok:
        raise HubError(f"{what}: HTTP {response.status_code} from {response.url}: {response.text[:300]}")
    return response


def log_in(browser, hub_url, name, password):
    """Fill in the hub's login form with ``browser`` (a requests.Session); HubError unless it lands on /hub/home."""
    _expect(browser.get(f"{hub_url}/hub/login", timeout=30), "the login page")
    form = {"username": name, "password": password, "_xsrf": browser.cookies.get("_xsrf", path="/hub/")}
    response = browser.post(f"{hub_url}/hub/login?next=/hub/home", data=form, timeout=30)
    if urlsplit(response.url).path != "/hub/home":
        raise HubError(f"login as {name!r} at {hub_url} failed: landed on {response.url} (HTTP {response.status_code})")
    return browser


class Learner:
    def __init__(self, hub_url, name, password, timeout=120):
        self.hub, self.name, self.password, self.timeout = hub_url.rstrip("/"), name, password, timeout
        self.browser = requests.Session()  # cookies, as a browser holds them
        self.api = requests.Session()  # the learner's API token
        self.server = f"{self.hub}/user/{name}"

    def login(self):
        """Fill in the hub's login form; then ask the hub for an API token, as the token page does."""
        log_in(self.browser, self.hub, self.name, self.password)
        return self.take_token()

    def take_token(self):
        """Ask the hub for an API token with the browser's log-in cookie (after the form, or an LMS launch)."""
        xsrf = self.browser.cookies.get("_xsrf", path="/hub/")  # a new one comes with the session
        response = _expect(self.browser.post(f"{self.hub}/hub/api/users/{self.name}/tokens",
                                             json={"note": "simulated learner", "expires_in": 3600},
                                             headers={"X-XSRFToken": xsrf}, timeout=30), "a new API token")
        self.api.headers["Authorization"] = f"token {response.json()['token']}"
        return self

    def start(self):
        """Start the learner's server through the REST API and wait until the hub reports it ready."""
        response = self.api.post(f"{self.hub}/hub/api/users/{self.name}/server", timeout=30)
        if response.status_code not in (201, 202, 400):  # 400: already running
            _expect(response, f"starting {self.name}'s server")
        return self._wait_for_servers(lambda servers: (servers.get("") or {}).get("ready"), "was not ready")

    def stop(self):
        """Stop the learner's server, as the hub's Stop My Server button does, and wait until it has stopped."""
        response = self.api.delete(f"{self.hub}/hub/api/users/{self.name}/server", timeout=30)
        if response.status_code not in (202, 204, 400):  # 400: not running
            _expect(response, f"stopping {self.name}'s server")
        return self._wait_for_servers(lambda servers: not servers, "did not stop")

    def _wait_for_servers(self, done, failure):
        """Poll the hub's user model until ``done(its servers)``; HubError after ``self.timeout`` s."""
        def servers():
            model = _expect(self.api.get(f"{self.hub}/hub/api/users/{self.name}", timeout=30), "the user model")
            return done(model.json().get("servers") or {})

        wait_until(servers, self.timeout, f"{self.name}'s server {failure}", every=0.25, error=HubError)
        return self

    def follow(self, link):
        """Follow an nbgitpuller link: its page, then the sync stream the page's script reads.

        Returns (the phase nbgitpuller ended in, every line of output it sent).
        """
        page = _expect(self.browser.get(link, timeout=60), "the nbgitpuller link")
        if urlsplit(page.url).path != f"/user/{self.name}/git-pull":
            raise HubError(f"the link led {self.name} to {page.url}, not to their server's git-pull page")
        query = {key: values[0] for key, values in parse_qs(urlsplit(page.url).query).items()}
        stream = {key: query[key] for key in ("repo", "branch", "depth", "targetpath") if key in query}
        output, phase = [], None
        with self.api.get(f"{self.server}/git-pull/api?{urlencode(stream)}", stream=True,
                          timeout=self.timeout) as events:
            _expect(events, "nbgitpuller's sync stream")
            for line in events.iter_lines(decode_unicode=True):
                if not line or not line.startswith("data:"):
                    continue
                event = json.loads(line[len("data:"):])
                output.append(event.get("output") or event.get("message") or "")
                phase = event.get("phase")
                if phase in ("finished", "error"):
                    break
        return phase, "".join(output)

    def contents(self, path, content=True):
        response = self.api.get(f"{self.server}/api/contents/{path}", params={"content": int(content)}, timeout=60)
        return _expect(response, f"reading {path}").json()

    def exists(self, path):
        return self.api.get(f"{self.server}/api/contents/{path}", params={"content": 0}, timeout=60).ok

    def notebook(self, path):
        return nbformat.from_dict(self.contents(path)["content"])

    def save(self, path, nb=None, text=None):
        """Save a notebook (or a text file), as JupyterLab's save does."""
        if nb is not None:
            model = {"type": "notebook", "format": "json", "content": nb}
        else:
            model = {"type": "file", "format": "text", "content": text}
        _expect(self.api.put(f"{self.server}/api/contents/{path}", json=model, timeout=60), f"saving {path}")

    def mkdir(self, path):
        response = self.api.put(f"{self.server}/api/contents/{path}", json={"type": "directory"}, timeout=60)
        _expect(response, f"making the folder {path}")

    def delete(self, path):
        _expect(self.api.delete(f"{self.server}/api/contents/{path}", timeout=60), f"deleting {path}")

    def kernel(self, path):
        """A kernel session for the notebook at ``path`` (its folder is the kernel's working directory)."""
        return Kernel(self, path)


# Jupyter's binary websocket protocol, the one JupyterLab speaks: each frame carries its channel and the
# message's parts as the kernel sent them (jupyter_server.services.kernels.connection.base).
WEBSOCKET_PROTOCOL = "v1.kernel.websocket.jupyter.org"


class Kernel:
    """One kernel of the learner's server, driven over its websocket (Jupyter's messaging protocol)."""

    def __init__(self, learner, path):
        self.learner = learner
        response = learner.api.post(f"{learner.server}/api/sessions", timeout=60,
                                    json={"path": path, "type": "notebook", "name": path.rsplit("/", 1)[-1],
                                          "kernel": {"name": "python3"}})
        self.session = _expect(response, f"a kernel for {path}").json()
        self.id = self.session["kernel"]["id"]
        # No key: the server signs what it passes on to the kernel, and the websocket carries no signature.
        self.client_session = Session(username=learner.name, key=b"")
        url = learner.server.replace("http", "ws", 1) + f"/api/kernels/{self.id}/channels"
        self.socket = websocket.create_connection(f"{url}?session_id={self.client_session.session}",
                                                  header=[f"Authorization: {learner.api.headers['Authorization']}"],
                                                  subprotocols=[WEBSOCKET_PROTOCOL], timeout=learner.timeout)
        if self.socket.getsubprotocol() != WEBSOCKET_PROTOCOL:
            self.socket.close()
            raise HubError(f"{learner.name}'s server answered the kernel websocket with the protocol "
                           f"{self.socket.getsubprotocol()!r}, not {WEBSOCKET_PROTOCOL!r}")

    def send(self, msg_type, content, channel="shell"):
        """Send a message to the kernel; return its id, which the kernel's answers name as their parent."""
        msg = self.client_session.msg(msg_type, content)
        self.socket.send_binary(serialize_msg_to_ws_v1(msg, channel, self.client_session.pack))
        return msg["msg_id"]

    def receive(self):
        """The kernel's next message, as jupyter_client's Session reads it, with the channel it came on."""
        channel, parts = deserialize_msg_from_ws_v1(self.socket.recv())
        msg = self.client_session.deserialize([b"", *parts])  # b"": the signature, which this session does not check
        msg["channel"] = channel
        return msg

    def replies(self, msg_id):
        """The kernel's messages answering ``msg_id``, on every channel, as they come: all of them within the
        learner's timeout, each waited for with what is left of it."""
        deadline = time.monotonic() + self.learner.timeout

        def answer():
            msg = self.receive()
            return msg if msg.get("parent_header", {}).get("msg_id") == msg_id else None

        while True:
            left = round(max(0.0, deadline - time.monotonic()), 1)
            yield wait_until(answer, left, f"no answer from {self.learner.name}'s kernel", every=0, error=HubError)

    def next_status(self, states):
        """Read the kernel's messages until a status in ``states`` (e.g. the server's "restarting"); return it."""
        def reported():
            msg = self.receive()
            if msg["header"]["msg_type"] == "status" and msg["content"]["execution_state"] in states:
                return msg["content"]["execution_state"]
            return None

        return wait_until(reported, self.learner.timeout, f"{self.learner.name}'s kernel reported none of "
                          f"{sorted(states)}", every=0, error=HubError)

    def execute(self, code):
        """Run code; return (its outputs as nbformat outputs, its execution count, the error name or None)."""
        msg_id = self.send("execute_request", {"code": code, "silent": False, "store_history": True,
                                               "user_expressions": {}, "allow_stdin": False, "stop_on_error": False})
        outputs, count, error, idle, replied = [], None, None, False, False
        for msg in self.replies(msg_id):
            kind = msg["header"]["msg_type"]
            if msg["channel"] == "shell" and kind == "execute_reply":
                replied, count = True, msg["content"].get("execution_count")
                if msg["content"]["status"] == "error":
                    error = msg["content"].get("ename")
            elif kind == "status":
                idle = msg["content"]["execution_state"] == "idle"
            elif kind in ("stream", "display_data", "execute_result", "error"):
                outputs.append(nbformat.v4.output_from_msg(msg))
            if idle and replied:
                break
        return outputs, count, error

    def run(self, nb):
        """Run every code cell of nb in order, storing outputs; return [(cell index, error name)]."""
        errors = []
        for index, cell in enumerate(nb.cells):
            if cell.cell_type != "code":
                continue
            cell.outputs, cell.execution_count, error = self.execute(cell.source)
            if error:
                errors.append((index, error))
        return errors

    def close(self):
        self.socket.close()
        self.learner.api.delete(f"{self.learner.server}/api/sessions/{self.session['id']}", timeout=60)
