"""The LTI pieces that need no hub (tools/lti.py, tools/lms_grades.py): registration, names, roles, keys, CSV.

The launch itself, the tool's key set served by the hub, the grades sent to an
LMS and every refused launch are in tests/test_hub_lti.py, against a real hub.
"""

import csv
import json
import subprocess
import sys
from pathlib import Path

import jwt
import pytest

from tools.class_hub import Hub, lti_banner
from tools.lms_grades import score_body, scores_url, write_csv
from tools.lti import (
    CUSTOM_CLAIM,
    INSTRUCTOR_ROLE,
    ROLES_CLAIM,
    TARGET_LINK_CLAIM,
    RegistrationError,
    assignment_of,
    hub_user_name,
    is_instructor,
    load_registration,
    public_key_set,
    record_launch,
    tool_key,
)

REPO = Path(__file__).resolve().parent.parent
GOOD = {"issuer": "https://lms.example.edu", "client_id": "10000000000001", "deployment_ids": ["1:abc"],
        "authorization_url": "https://lms.example.edu/api/lti/authorize_redirect",
        "key_set_url": "https://lms.example.edu/api/lti/security/jwks",
        "token_url": "https://lms.example.edu/login/oauth2/token"}


def write(tmp_path, registration):
    path = tmp_path / "lti.json"
    path.write_text(json.dumps(registration) if not isinstance(registration, str) else registration)
    return path


def test_a_filled_in_registration_loads_with_the_default_course(tmp_path):
    assert load_registration(write(tmp_path, GOOD)) == {**GOOD, "course": "attention",
                                                         "token_audience": GOOD["token_url"]}


@pytest.mark.parametrize("change, expected", [
    ({"issuer": ""}, "issuer: expected the platform's issuer"),
    ({"client_id": None}, "client_id: expected the client ID"),
    ({"deployment_ids": "1:abc"}, "deployment_ids: expected a list of one or more strings"),
    ({"deployment_ids": []}, "deployment_ids: expected a list of one or more strings"),
    ({"token_url": "lms.example.edu/token"}, "token_url: expected an https:// URL, got 'lms.example.edu/token'"),
    ({"course": "My Course"}, "course: expected an nbgrader course ID"),
])
def test_a_bad_registration_names_the_field(tmp_path, change, expected):
    with pytest.raises(RegistrationError, match="^LTI registration .*" + expected.replace("(", r"\(")):
        load_registration(write(tmp_path, {**GOOD, **change}))


def test_the_template_is_refused_until_filled_in_and_a_missing_file_says_what_to_do(tmp_path):
    with pytest.raises(RegistrationError, match='issuer: expected .* got "FILL-IN'):
        load_registration(REPO / "hub" / "lti.example.json")
    with pytest.raises(RegistrationError, match="no such file .*copy hub/lti.example.json"):
        load_registration(tmp_path / "absent.json")
    with pytest.raises(RegistrationError, match="not JSON"):
        load_registration(write(tmp_path, "issuer = 1"))


@pytest.mark.usefixtures("hub_installed")  # the hub checks for its proxy first
def test_the_hub_refuses_a_bad_registration_before_starting(tmp_path):
    with pytest.raises(RegistrationError, match="client_id"):
        Hub(tmp_path / "state", 8000, lti=write(tmp_path, {**GOOD, "client_id": ""}))
    assert not (tmp_path / "state" / "jupyterhub.log").exists()


def test_user_names_come_from_the_lms_user_id_stable_and_never_colliding():
    assert hub_user_name("a6d5c443-1f51-4783-ba1a-7686ffe3b54a") == "a6d5c443-1f51-4783-ba1a-7686ffe3b54a"
    assert hub_user_name("2") == "2"  # Moodle's user IDs are numbers
    hashed = hub_user_name("User|42")  # upper case and '|' are not a hub name: a hash of the whole ID
    assert hashed.startswith("lti-") and hashed == hub_user_name("User|42") != hub_user_name("user|42")
    assert hub_user_name("lti-x") != "lti-x"  # no kept ID can look like a hashed one
    with pytest.raises(ValueError, match="user_id: expected the LMS's user ID"):
        hub_user_name("")


@pytest.mark.parametrize("roles, expected", [
    ([INSTRUCTOR_ROLE], True),
    ([INSTRUCTOR_ROLE + "#TeachingAssistant"], True),  # the older form some platforms send
    (["http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"], True),  # LTI 1.3's form
    (["http://purl.imsglobal.org/vocab/lis/v2/membership/Learner#Instructor"], False),
    (["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"], False),
    (["http://purl.imsglobal.org/vocab/lis/v2/membership#Learner#Instructor"], False),  # a learner's sub-role
    (["http://purl.imsglobal.org/vocab/lis/v2/institution/person#Instructor"], False),  # not in this course
    ([], False),
])
def test_only_the_course_instructor_role_makes_an_instructor(roles, expected):
    assert is_instructor({ROLES_CLAIM: roles}) is expected


def test_the_tool_key_is_made_once_private_and_its_key_set_holds_the_public_half(tmp_path):
    key = tool_key(tmp_path)
    assert (tmp_path / "lti_tool_key.pem").stat().st_mode & 0o777 == 0o600
    assert tool_key(tmp_path).private_numbers() == key.private_numbers()  # read again, not made again
    served = public_key_set(key)["keys"][0]
    assert set(served) == {"kty", "n", "e", "kid", "alg", "use", "key_ops"} and served["key_ops"] == ["verify"]
    token = jwt.encode({"a": 1}, key, algorithm="RS256")
    assert jwt.decode(token, jwt.PyJWK(served).key, algorithms=["RS256"]) == {"a": 1}


def test_a_score_is_the_whole_ags_score_and_goes_to_the_line_items_scores():
    body = score_body("sub-1", 2.0, 3.0)
    assert {key: body[key] for key in body if key != "timestamp"} == {
        "userId": "sub-1", "scoreGiven": 2.0, "scoreMaximum": 3.0,
        "activityProgress": "Completed", "gradingProgress": "FullyGraded"}
    assert body["timestamp"].endswith("+00:00")
    assert scores_url("https://lms.example.edu/api/lti/courses/1/line_items/7") == \
        "https://lms.example.edu/api/lti/courses/1/line_items/7/scores"
    assert scores_url("https://moodle.example.edu/mod/lti/services.php/2/lineitems/5/lineitem?type_id=3") == \
        "https://moodle.example.edu/mod/lti/services.php/2/lineitems/5/lineitem/scores?type_id=3"


@pytest.mark.parametrize("lms, header, row", [
    ("canvas", ["Student", "ID", "SIS User ID", "SIS Login ID", "Section", "ch02"],
     ["Ana Souza", "4321", "S-17", "", "", "2"]),
    ("moodle", ["Email address", "ch02"], ["ana@school.example", "2"]),
])
def test_the_csv_has_the_lms_import_columns_and_only_learners_who_launched(tmp_path, lms, header, row):
    record_launch(tmp_path, "ana", {"sub": "ana", "name": "Ana Souza", "email": "ana@school.example",
                                    "https://purl.imsglobal.org/spec/lti/claim/custom": {
                                        "assignment": "ch02", "lms_user_id": "4321"},
                                    "https://purl.imsglobal.org/spec/lti/claim/lis": {"person_sourcedid": "S-17"}})
    from tools.lti import read_launches

    assert (tmp_path / "lti_launches.json").stat().st_mode & 0o777 == 0o600
    path = tmp_path / "grades.csv"
    write_csv(path, "ch02", {"ana": (2.0, 3.0), "never-came": (3.0, 3.0)}, read_launches(tmp_path), lms)
    assert list(csv.reader(path.open())) == [header, row]


def test_the_grades_command_refuses_a_state_folder_without_the_tool_key(tmp_path):
    registration = write(tmp_path, GOOD)
    result = subprocess.run([sys.executable, "-m", "tools.lms_grades", "ch02", "--gradebook",
                             str(tmp_path / "gradebook.db"), "--registration", str(registration),
                             "--state", str(tmp_path / "empty")], cwd=REPO, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 1 and "no tool key" in result.stderr, result.stderr
    assert not (tmp_path / "empty" / "lti_tool_key.pem").exists()


@pytest.mark.parametrize("claims, expected", [
    ({CUSTOM_CLAIM: {"assignment": "quiz-1"}, TARGET_LINK_CLAIM: "https://hub/x/02_masked_softmax.ipynb"}, "quiz-1"),
    ({TARGET_LINK_CLAIM: "https://hub/hub/user-redirect/git-pull?repo=r&urlpath=lab%2Ftree%2Frepo%2F"
                         "07_positional_encoding.ipynb"}, "ch07"),
    ({TARGET_LINK_CLAIM: "https://hub/hub/"}, None),
    ({}, None),
])
def test_the_assignment_is_the_custom_parameter_else_the_chapter_the_link_opens(claims, expected):
    assert assignment_of(claims) == expected


def test_the_lti_banner_gives_the_urls_the_lms_asks_for_and_no_password():
    text = lti_banner("https://hub.example.edu", "https://github.com/org/attention-notebooks")
    for url in ("https://hub.example.edu/hub/lti13/oauth_login", "https://hub.example.edu/hub/lti13/oauth_callback",
                "https://hub.example.edu/hub/lti13/jwks",
                "https://hub.example.edu/hub/user-redirect/git-pull?repo=https%3A%2F%2Fgithub.com%2Forg%2F"
                "attention-notebooks&branch=learner&urlpath=lab%2Ftree%2Fattention-notebooks%2F00_start_here.ipynb"):
        assert f" {url}\n" in text, url
    assert "password" not in text.replace("No password", "")
