"""A test LMS on 127.0.0.1: an LTI 1.3 platform small enough to read, for tests/test_hub_lti.py.

It has a key pair of its own, made when it starts, and serves its key set at
/jwks. Its authorization URL (/auth) records the hub's authentication request
and answers it as JSON (a real platform answers with a form that the browser
posts on); the test then signs an id_token with ``id_token`` and posts it to
the hub itself. /token checks the tool's signed client assertion against the
hub's key set (PyJWT) and gives an access token; /lineitems/NAME/scores records
each score, replacing the learner's earlier one as AGS prescribes.
"""

import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from tools.lti import AGS_CLAIM, CUSTOM_CLAIM, DEPLOYMENT_CLAIM, ROLES_CLAIM, SCORE_SCOPE, public_key_set

CLIENT_ID = "hub-client-1"
DEPLOYMENT_ID = "deployment-1"
LEARNER_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"


class LtiTestPlatform:
    def __init__(self, tool_key_set_url=None):
        self.key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        self.key_set = public_key_set(self.key)
        self.kid = self.key_set["keys"][0]["kid"]
        self.tool_key_set_url = tool_key_set_url  # set once the hub's URL is known
        self.auth_requests, self.tokens, self.token_requests = [], set(), []
        self.scores = {}  # line item path: {userId: the latest score}
        self.score_posts = []  # every score received, in order
        platform = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet: the test reads what it recorded instead
                pass

            def answer(self, status, body):
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self):
                url = urlsplit(self.path)
                if url.path == "/jwks":
                    return self.answer(200, platform.key_set)
                if url.path == "/auth":
                    request = {key: values[0] for key, values in parse_qs(url.query).items()}
                    platform.auth_requests.append(request)
                    return self.answer(200, request)
                return self.answer(404, {"error": "not found"})

            def do_POST(self):
                url = urlsplit(self.path)
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if url.path == "/token":
                    return self.answer(*platform.grant({k: v[0] for k, v in parse_qs(body.decode()).items()}))
                if url.path.startswith("/lineitems/") and url.path.endswith("/scores"):
                    token = self.headers.get("Authorization", "").removeprefix("Bearer ")
                    if token not in platform.tokens:
                        return self.answer(401, {"error": "invalid access token"})
                    if self.headers.get("Content-Type") != "application/vnd.ims.lis.v1.score+json":
                        return self.answer(415, {"error": "expected application/vnd.ims.lis.v1.score+json"})
                    score = json.loads(body)
                    platform.score_posts.append((url.path, score))
                    platform.scores.setdefault(url.path.removesuffix("/scores"), {})[score["userId"]] = score
                    return self.answer(200, {})
                return self.answer(404, {"error": "not found"})

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def registration(self):
        return {"issuer": self.url, "client_id": CLIENT_ID, "deployment_ids": [DEPLOYMENT_ID],
                "authorization_url": f"{self.url}/auth", "key_set_url": f"{self.url}/jwks",
                "token_url": f"{self.url}/token", "course": "attention"}

    def grant(self, form):
        """The token endpoint: (status, body). The assertion must be the tool's, for this token URL."""
        self.token_requests.append(form)
        if form.get("grant_type") != "client_credentials" or "client_assertion" not in form:
            return 400, {"error": "invalid_request"}
        try:
            signing_key = jwt.PyJWKClient(self.tool_key_set_url).get_signing_key_from_jwt(form["client_assertion"])
            claims = jwt.decode(form["client_assertion"], signing_key.key, algorithms=["RS256"],
                                audience=f"{self.url}/token", issuer=CLIENT_ID)
        except jwt.PyJWTError as error:
            return 401, {"error": "invalid_client", "error_description": str(error)}
        if claims.get("sub") != CLIENT_ID or form.get("scope") != SCORE_SCOPE:
            return 400, {"error": "invalid_scope"}
        token = secrets.token_urlsafe(16)
        self.tokens.add(token)
        return 200, {"access_token": token, "token_type": "Bearer", "expires_in": 3600, "scope": SCORE_SCOPE}

    def lineitem(self, name):
        return f"{self.url}/lineitems/{name}"

    def id_token(self, nonce, sub="learner-1", roles=(LEARNER_ROLE,), assignment="ch02", key=None, **changes):
        """A signed launch for ``sub``; ``changes`` replace claims (None removes one), ``key`` forges it."""
        now = int(time.time())
        claims = {
            "iss": self.url, "aud": CLIENT_ID, "sub": sub, "iat": now, "exp": now + 300, "nonce": nonce,
            "name": f"Name of {sub}", "email": f"{sub}@school.example",
            "https://purl.imsglobal.org/spec/lti/claim/message_type": "LtiResourceLinkRequest",
            "https://purl.imsglobal.org/spec/lti/claim/version": "1.3.0",
            DEPLOYMENT_CLAIM: DEPLOYMENT_ID,
            "https://purl.imsglobal.org/spec/lti/claim/target_link_uri": "https://hub.invalid/",
            "https://purl.imsglobal.org/spec/lti/claim/resource_link": {"id": f"link-{assignment}"},
            ROLES_CLAIM: list(roles),
            CUSTOM_CLAIM: {"assignment": assignment},
            AGS_CLAIM: {"scope": [SCORE_SCOPE], "lineitem": self.lineitem(assignment)},
        }
        if sub is None:  # an anonymous launch
            del claims["sub"]
        for name, value in changes.items():
            claim = {"deployment_id": DEPLOYMENT_CLAIM}.get(name, name)
            if value is None:
                claims.pop(claim, None)
            else:
                claims[claim] = value
        return jwt.encode(claims, key or self.key, algorithm="RS256", headers={"kid": self.kid})

    def close(self):
        self.server.shutdown()
        self.server.server_close()
