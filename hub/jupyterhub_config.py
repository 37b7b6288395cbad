# A JupyterHub for a class on one machine, on 127.0.0.1 (docs/hub.md). tools/class_hub.py
# starts it (`make hub`, and the tests) and passes every setting below through
# ATTN_HUB_* environment variables; it checks them first, with clear errors.
#
# - Learners log in with any name and the shared class password; the instructor
#   logs in as an admin with a longer one (SharedPasswordAuthenticator: no
#   system users).
# - Each learner's server is a local process with its own home folder under
#   the hub's state folder (SimpleLocalProcessSpawner). It gives no isolation
#   between learners: for a real class, The Littlest JupyterHub or Zero to
#   JupyterHub (docs/hub.md, hub/config.yaml).
# - nbgitpuller is a server extension of the single-user servers; idle
#   servers are stopped by jupyterhub-idle-culler, a hub-managed service.
import os
import sys
from pathlib import Path

c = get_config()  # noqa: F821 (JupyterHub's config loader defines it)

env = os.environ
state = Path(env["ATTN_HUB_STATE"])
python_bin = Path(sys.executable).parent

c.JupyterHub.ip = "127.0.0.1"
c.JupyterHub.port = int(env["ATTN_HUB_PORT"])
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(env["ATTN_HUB_API_PORT"])
c.JupyterHub.db_url = f"sqlite:///{state / 'jupyterhub.sqlite'}"
c.JupyterHub.cookie_secret_file = str(state / "jupyterhub_cookie_secret")
c.JupyterHub.pid_file = str(state / "jupyterhub.pid")

c.ConfigurableHTTPProxy.command = [env["ATTN_HUB_PROXY"]]
c.ConfigurableHTTPProxy.api_url = f"http://127.0.0.1:{env['ATTN_HUB_PROXY_API_PORT']}"

c.JupyterHub.authenticator_class = "shared-password"
c.SharedPasswordAuthenticator.user_password = env["ATTN_HUB_PASSWORD"]
c.SharedPasswordAuthenticator.admin_password = env["ATTN_HUB_ADMIN_PASSWORD"]
c.Authenticator.admin_users = {env["ATTN_HUB_ADMIN"]}
c.Authenticator.allow_all = True

c.JupyterHub.spawner_class = "simple"
c.SimpleLocalProcessSpawner.home_dir_template = str(state / "home" / "{username}")
c.Spawner.cmd = [str(python_bin / "jupyterhub-singleuser")]
c.Spawner.default_url = "/lab"
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
# Jupyter refuses to run as root unless told; CI and containers run as root.
c.Spawner.args = ["--ServerApp.allow_root=True"] if os.geteuid() == 0 else []
# The kernels run the hub's own Python; the thread count keeps one learner from taking every core.
c.Spawner.environment = {"OMP_NUM_THREADS": env.get("ATTN_HUB_THREADS", "1"),
                         "PATH": f"{python_bin}{os.pathsep}{env['PATH']}"}

cull_timeout = env.get("ATTN_HUB_CULL_TIMEOUT", "3600")
c.JupyterHub.load_roles = [{
    "name": "idle-culler",
    "scopes": ["list:users", "read:users:activity", "read:servers", "delete:servers"],
    "services": ["idle-culler"],
}]
c.JupyterHub.services = [{
    "name": "idle-culler",
    "command": [sys.executable, "-m", "jupyterhub_idle_culler", f"--timeout={cull_timeout}",
                f"--cull-every={env.get('ATTN_HUB_CULL_EVERY', '60')}"],
}]
