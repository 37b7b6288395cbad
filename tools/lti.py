"""The hub as an LTI 1.3 tool: its registration with the LMS, its own key pair, and what launches recorded.

Used by hub/jupyterhub_config.py and hub/lti_launch.py (the launch), by
tools/lms_grades.py (grades back to the LMS) and by the tests (docs/lms.md).
Every signature is checked or made by PyJWT with keys from `cryptography`;
nothing here verifies a token by hand.

- The registration is one JSON file (hub/lti.example.json is the template) that
  an LMS administrator fills in from the LMS's tool screen; `load_registration`
  checks it and says which field is wrong.
- The tool's key pair is made at the hub's first start, in its state folder
  (`tool_key`), never in git. `public_key_set` is what the hub serves at
  /hub/lti13/jwks, which the LMS reads to check the tool's signed requests.
- Each accepted launch is recorded in the state folder (`record_launch`): the
  LMS's user ID, roles and, when the LMS offers grades (LTI Advantage AGS),
  the line item of the assignment launched. tools/lms_grades.py reads it.
"""

import hashlib
import json
import os
import re
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import unquote

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

# The registration's fields, each with what the LMS's tool screen calls it (docs/lms.md).
REGISTRATION_FIELDS = {
    "issuer": "the platform's issuer (iss), e.g. https://canvas.instructure.com",
    "client_id": "the client ID the LMS gave the tool",
    "deployment_ids": "the deployment IDs of the tool in the LMS (a list)",
    "authorization_url": "the platform's OIDC authorization (authentication request) URL",
    "key_set_url": "the platform's public key set (JWKS) URL",
    "token_url": "the platform's OAuth2 access token URL",
}
# The nbgrader course an LMS instructor grades, and learners belong to (hub groups formgrade-/nbgrader-COURSE).
DEFAULT_COURSE = "attention"

INSTRUCTOR_ROLE = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
ROLES_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/roles"
DEPLOYMENT_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/deployment_id"
CUSTOM_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/custom"
AGS_CLAIM = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
LIS_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/lis"
TARGET_LINK_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/target_link_uri"
RESOURCE_LINK_CLAIM = "https://purl.imsglobal.org/spec/lti/claim/resource_link"
SCORE_SCOPE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"

KEY_FILE = "lti_tool_key.pem"
LAUNCHES_FILE = "lti_launches.json"
# A user ID that is already a good hub user name is kept as it is (readable in nbgrader and the admin page);
# any other becomes "lti-" and a hash of it. No kept name starts with "lti-", so the two never meet.
# A chapter's file name in a link, e.g. the nbgitpuller link's urlpath=lab/tree/REPO/02_masked_softmax.ipynb.
CHAPTER_IN_LINK = re.compile(r"/(\d\d)_[^/?&]*\.ipynb")
PLAIN_USER_ID = re.compile(r"(?!lti-)[a-z0-9][a-z0-9_.-]{0,63}")


class RegistrationError(ValueError):
    """The registration file is missing, not JSON, or lacks a field; the message names which."""


def load_registration(path):
    """The registration in ``path`` as a dict, every field checked (RegistrationError otherwise)."""
    path = Path(path)
    try:
        registration = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise RegistrationError(f"LTI registration {path}: no such file (copy hub/lti.example.json and fill it "
                                "in from the LMS's tool screen, docs/lms.md)") from None
    except json.JSONDecodeError as error:
        raise RegistrationError(f"LTI registration {path}: not JSON ({error})") from None
    if not isinstance(registration, dict):
        raise RegistrationError(f"LTI registration {path}: expected a JSON object, got {type(registration).__name__}")
    for field, meaning in REGISTRATION_FIELDS.items():
        value = registration.get(field)
        if field == "deployment_ids":
            if not (isinstance(value, list) and value and all(isinstance(v, str) and v for v in value)):
                raise RegistrationError(f"LTI registration {path}: {field}: expected a list of one or more "
                                        f"strings ({meaning}), got {value!r}")
        elif not isinstance(value, str) or not value or value.startswith("FILL-IN"):
            raise RegistrationError(f"LTI registration {path}: {field}: expected {meaning}, got {value!r}")
        elif field.endswith("_url") and not value.startswith(("https://", "http://")):
            raise RegistrationError(f"LTI registration {path}: {field}: expected an https:// URL, got {value!r}")
    # Brightspace names a token audience of its own ("OAuth2 Audience"); other platforms take the token URL.
    audience = registration.setdefault("token_audience", registration["token_url"])
    if not isinstance(audience, str) or not audience:
        raise RegistrationError(f"LTI registration {path}: token_audience: expected the audience of the token "
                                f"request (Brightspace's OAuth2 Audience), got {audience!r}")
    course = registration.setdefault("course", DEFAULT_COURSE)
    if not isinstance(course, str) or not PLAIN_USER_ID.fullmatch(course):
        raise RegistrationError(f"LTI registration {path}: course: expected an nbgrader course ID (lower-case "
                                f"letters, digits, '.', '_', '-'), got {course!r}")
    return registration


def tool_key(state):
    """The tool's private key, from ``state``/lti_tool_key.pem; made there (readable by this user only) at first."""
    path = Path(state) / KEY_FILE
    if not path.exists():
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
        path.parent.mkdir(parents=True, exist_ok=True)
        # Created with mode 0600 from the start: the key is never readable by others, not even for a moment.
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "wb") as file:
            file.write(pem)
    return serialization.load_pem_private_key(path.read_bytes(), password=None)


def key_id(public_key):
    """The key's ID: a hash of its public half, so a new key pair gets a new ID and the LMS fetches it."""
    der = public_key.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return hashlib.sha256(der).hexdigest()[:32]


def public_key_set(private_key):
    """The JSON Web Key Set of the tool's public key, as served at /hub/lti13/jwks."""
    public = private_key.public_key()
    jwk = jwt.algorithms.RSAAlgorithm.to_jwk(public, as_dict=True)
    return {"keys": [{**jwk, "kid": key_id(public), "alg": "RS256", "use": "sig"}]}


def hub_user_name(user_id):
    """The hub's user name for the LMS's user ID (the id_token's ``sub``): stable, and never an editable name."""
    if not isinstance(user_id, str) or not user_id:
        raise ValueError(f"user_id: expected the LMS's user ID (sub), a non-empty string, got {user_id!r}")
    if PLAIN_USER_ID.fullmatch(user_id):
        return user_id
    return "lti-" + hashlib.sha256(user_id.encode("utf-8")).hexdigest()[:24]


# LTI 1.3 writes a sub-role as the role's URI, a slash, then '#' and the sub-role
# (…/membership/Instructor#TeachingAssistant); some platforms also send the older form, …/membership#Instructor#….
INSTRUCTOR_SUB_ROLE = INSTRUCTOR_ROLE.replace("membership#Instructor", "membership/Instructor#")


def is_instructor(id_token):
    """Whether the launch carries the LTI instructor role (its sub-roles, such as TeachingAssistant, too)."""
    roles = id_token.get(ROLES_CLAIM) or []
    return any(role == INSTRUCTOR_ROLE or role.startswith((INSTRUCTOR_ROLE + "#", INSTRUCTOR_SUB_ROLE))
               for role in roles)


def assignment_of(id_token):
    """The nbgrader assignment a launch is for: the link's custom parameter ``assignment``, else the chapter
    its target link opens (``…/02_masked_softmax.ipynb`` is ch02), else None."""
    custom = id_token.get(CUSTOM_CLAIM) or {}
    if custom.get("assignment"):
        return str(custom["assignment"])
    chapter = CHAPTER_IN_LINK.search(unquote(str(id_token.get(TARGET_LINK_CLAIM) or "")))
    return f"ch{chapter.group(1)}" if chapter else None


def launch_record(id_token):
    """What a launch tells the grades command: who, which assignment, and where its score goes."""
    custom = id_token.get(CUSTOM_CLAIM) or {}
    ags = id_token.get(AGS_CLAIM) or {}
    lis = id_token.get(LIS_CLAIM) or {}
    return {
        "sub": id_token["sub"],
        "assignment": assignment_of(id_token),
        "lineitem": ags.get("lineitem"),
        "ags_scope": ags.get("scope") or [],
        "resource_link": (id_token.get(RESOURCE_LINK_CLAIM) or {}).get("id"),
        # For the CSV of platforms without AGS only (tools/lms_grades.py): never the hub's user name.
        "name": id_token.get("name"),
        "email": id_token.get("email"),
        "sis_id": lis.get("person_sourcedid"),
        "lms_user_id": custom.get("lms_user_id"),
        "launched": datetime.now(timezone.utc).isoformat(timespec="seconds"),
    }


def record_launch(state, user_name, id_token):
    """Add a launch to ``state``/lti_launches.json, per hub user and assignment (the latest launch wins)."""
    launches = read_launches(state)
    record = launch_record(id_token)
    user = launches.setdefault(user_name, {"sub": record["sub"], "assignments": {}})
    user["last"] = record
    if record["assignment"]:
        user["assignments"][record["assignment"]] = record
    path = Path(state) / LAUNCHES_FILE
    partial = path.with_suffix(".json.partial")
    # Readable by the hub's user only: it holds learners' names and e-mails (for the CSV).
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as file:
        file.write(json.dumps(launches, indent=1, sort_keys=True))
    partial.replace(path)  # whole or not at all: a reader never sees half a file
    return record


def read_launches(state):
    """Every recorded launch: {hub user: {"sub", "last", "assignments": {assignment: launch}}}."""
    path = Path(state) / LAUNCHES_FILE
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}
