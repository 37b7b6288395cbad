"""Launch from the LMS into the hub: jupyterhub-ltiauthenticator's LTI 1.3 authenticator, and what it leaves to us.

The library checks the login initiation, the state cookie, the id_token's
signature against the platform's key set, its issuer, audience, expiry and
required claims, and the nonce against the browser's cookie (docs/lms.md).
This subclass adds what a class needs and the library does not do:

- the deployment ID must be one of the registration's (the library ignores it);
- a nonce is accepted once: a launch replayed with the same cookies is refused;
- the hub user name is the LMS's stable user ID (``sub``), never a display name
  or an email, which users can edit (tools/lti.py, hub_user_name);
- the instructor role makes a hub admin in the nbgrader course's instructor
  group; any other role makes a learner in its student group, never an admin;
- each launch is recorded for the grades command (tools/lti.py, record_launch);
- every refused launch is answered 4xx and logged in one line starting
  "LTI launch refused", before any user or server exists;
- the tool's public key set is served at /hub/lti13/jwks.
"""

import json
import time

from jupyterhub.handlers import BaseHandler
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler
from tornado.web import HTTPError
from traitlets import Dict, Int, Set, Unicode

from tools.lti import DEPLOYMENT_CLAIM, hub_user_name, is_instructor, public_key_set, record_launch, tool_key


class Refused(HTTPError):
    """A launch this module refuses (the library's own refusals are tornado HTTPErrors too)."""


class LaunchHandler(LTI13CallbackHandler):
    """The library's launch (callback) handler, with one log line for every refusal, whoever refuses."""

    async def post(self):
        try:
            await super().post()
        except HTTPError as error:
            self.log.warning("LTI launch refused (HTTP %s): %s", error.status_code, error.log_message or error.reason)
            raise

    def check_nonce(self, id_token):
        super().check_nonce(id_token)  # the nonce is the hash of this browser's cookie
        self.authenticator.use_nonce(id_token["nonce"], id_token.get("exp"))


class KeySetHandler(BaseHandler):
    """GET /hub/lti13/jwks: the tool's public key set, which the LMS reads to check the tool's signatures."""

    def get(self):
        self.set_header("Content-Type", "application/json")
        self.write(json.dumps(self.authenticator.key_set))


class ClassLTIAuthenticator(LTI13Authenticator):
    callback_handler = LaunchHandler

    deployment_ids = Set(Unicode(), config=True, help="The deployment IDs of the tool in the LMS; others are refused.")
    state_dir = Unicode(config=True, help="The hub's state folder: the tool's key pair and the launch records.")
    course = Unicode("attention", config=True, help="The nbgrader course: groups formgrade-COURSE, nbgrader-COURSE.")
    nonce_lifetime = Int(600, config=True, help="Seconds a used nonce is kept (at least the id_token's max age).")
    _used_nonces = Dict()

    def get_handlers(self, app):
        return [*super().get_handlers(app), (r"/lti13/jwks", KeySetHandler)]

    @property
    def key_set(self):
        if not hasattr(self, "_key_set"):
            self._key_set = public_key_set(tool_key(self.state_dir))
        return self._key_set

    def use_nonce(self, nonce, expires):
        """Refuse a nonce seen before; remember this one until it cannot be accepted anyway."""
        now = time.time()
        self._used_nonces = {seen: until for seen, until in self._used_nonces.items() if until > now}
        if nonce in self._used_nonces:
            raise Refused(400, "replayed launch: this id_token's nonce was already used")
        self._used_nonces[nonce] = max(float(expires or 0), now + self.nonce_lifetime)

    async def authenticate(self, handler, data=None):
        """The hub user for a launch the library has verified; Refused (4xx) for what it leaves unchecked."""
        data = data or {}
        deployment = data.get(DEPLOYMENT_CLAIM)
        if deployment not in self.deployment_ids:
            raise Refused(403, f"unknown deployment ID {deployment!r} (the registration has "
                               f"{sorted(self.deployment_ids)})")
        if not isinstance(data.get("sub"), str) or not data["sub"]:
            raise Refused(400, "no user ID: the id_token has no 'sub' claim (an anonymous launch)")
        name = hub_user_name(data["sub"])
        instructor = is_instructor(data)
        record_launch(self.state_dir, name, data)
        self.log.info("LTI launch accepted: user %s (%s) from deployment %s", name,
                      "instructor" if instructor else "learner", deployment)
        return {
            "name": name,
            "admin": instructor,
            # nbgrader's convention on a hub: instructors in formgrade-COURSE, students in nbgrader-COURSE.
            "groups": [f"formgrade-{self.course}" if instructor else f"nbgrader-{self.course}"],
        }
