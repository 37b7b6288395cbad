# A JupyterHub for a class on one machine, on 127.0.0.1 (docs/hub.md). tools/class_hub.py
# starts it (`make hub`, and the tests) and passes every setting below through
# ATTN_HUB_* environment variables; it checks them first, with clear errors.
#
# - Learners log in with any name and the shared class password; the instructor
#   logs in as an admin with a longer one (SharedPasswordAuthenticator: no
#   system users). With ATTN_HUB_LTI (a registration file, docs/lms.md) they
#   launch from the LMS instead (hub/lti_launch.py), and no password logs in.
# - Each learner's server is a local process with its own home folder under
#   the hub's state folder (SimpleLocalProcessSpawner). It gives no isolation
#   between learners: for a real class, The Littlest JupyterHub or Zero to
#   JupyterHub (docs/hub.md, hub/config.yaml).
# - nbgitpuller is a server extension of the single-user servers; idle
#   servers are stopped by jupyterhub-idle-culler, a hub-managed service.
# - The proxy, the culler and every learner's server end when the hub ends,
#   however it ends: each is started through tools/hub_child.py, which asks
#   Linux for SIGTERM on the hub's death. A hub that stops normally stops
#   them itself first (cleanup_servers), so a learner's server never outlives
#   the hub; the learner's files stay in their home (docs/hub.md).
# - At most ATTN_HUB_MAX_SERVERS servers run at once; one more learner gets
#   JupyterHub's "Active user limit exceeded" page at once instead of a wait.
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)

env = os.environ
state = Path(env["ATTN_HUB_STATE"])
python_bin = Path(sys.executable).parent
# The config is read in the hub's own process: its pid is the parent each child watches.
with_hub = [sys.executable, str(Path(__file__).resolve().parent.parent / "tools" / "hub_child.py"), str(os.getpid())]

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(env["ATTN_HUB_PORT"])
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env["ATTN_HUB_API_PORT"])
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")
# Where tools/class_hub.py looks for it (JupyterHub's default is this name in the working folder).
c.ConfigurableHTTPProxy.pid_file = str(state / "jupyterhub-proxy.pid")

c.ConfigurableHTTPProxy.command = [*with_hub, env["ATTN_HUB_PROXY"]]
# How often the hub checks that its proxy runs, and starts it again if not (JupyterHub's default: 5 s).
c.ConfigurableHTTPProxy.check_running_interval = int(env.get("ATTN_HUB_PROXY_CHECK", "5"))
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['ATTN_HUB_PROXY_API_PORT']}"

if env.get("ATTN_HUB_LTI"):
    # Launch from the LMS (LTI 1.3, docs/lms.md): the registration file names the platform; the LMS's
    # launch decides who is who, and its instructor role who is an admin. No password logs in.
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # tools.lti, for hub/lti_launch.py
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from tools.lti import load_registration, tool_key

    registration = load_registration(env["ATTN_HUB_LTI"])
    tool_key(state)  # the tool's key pair, made at the first start in the state folder
    c.JupyterHub.authenticator_class = "lti_launch.ClassLTIAuthenticator"
    c.ClassLTIAuthenticator.issuer = registration["issuer"]
    c.ClassLTIAuthenticator.client_id = {registration["client_id"]}
    c.ClassLTIAuthenticator.deployment_ids = set(registration["deployment_ids"])
    c.ClassLTIAuthenticator.authorize_url = registration["authorization_url"]
    c.ClassLTIAuthenticator.jwks_endpoint = registration["key_set_url"]
    c.ClassLTIAuthenticator.username_key = "sub"  # the LMS's stable user ID, never an editable name
    c.ClassLTIAuthenticator.state_dir = str(state)
    c.ClassLTIAuthenticator.course = registration["course"]
    c.ClassLTIAuthenticator.uri_scheme = env.get("ATTN_HUB_LTI_SCHEME", "auto")
    c.Authenticator.manage_groups = True  # the launch's role sets the nbgrader group at every launch
else:
    c.JupyterHub.authenticator_class = "shared-password"
    c.SharedPasswordAuthenticator.user_password = env["ATTN_HUB_PASSWORD"]
    c.SharedPasswordAuthenticator.admin_password = env["ATTN_HUB_ADMIN_PASSWORD"]
    c.Authenticator.admin_users = {env["ATTN_HUB_ADMIN"]}
c.Authenticator.allow_all = True

c.JupyterHub.cleanup_servers = True  # stopping the hub stops the learners' servers (JupyterHub's default)
c.JupyterHub.active_server_limit = int(env.get("ATTN_HUB_MAX_SERVERS", "0"))

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(state / "home" / "{username}")
c.Spawner.cmd = [*with_hub, str(python_bin / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# A save on a full disk fails and leaves the old file whole (hub/whole_saves.py, from this folder).
c.Spawner.args = ["--ServerApp.contents_manager_class=whole_saves.WholeSaves"]
# Jupyter refuses to run as root unless told; CI and containers run as root.
c.Spawner.args += ["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []
# The kernels run the hub's own Python; the thread count keeps one learner from taking every core.
c.Spawner.environment = {"OMP_NUM_THREADS": env.get("ATTN_HUB_THREADS", "1"),
                         "PATH": f"{python_bin}{os.pathsep}{env['PATH']}",
                         "PYTHONPATH": str(Path(__file__).resolve().parent)}

cull_timeout = env.get("ATTN_HUB_CULL_TIMEOUT", "3600")
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [*with_hub, sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={cull_timeout}",
                f"--cull-every={env.get('ATTN_HUB_CULL_EVERY', '60')}"],
}]
