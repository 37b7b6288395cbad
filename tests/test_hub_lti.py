"""Launch from an LMS into the hub, and the score back, end to end on 127.0.0.1 (docs/lms.md).

One real hub (tools/class_hub.py with an LTI registration, so
jupyterhub-ltiauthenticator's LTI 1.3 authenticator and hub/lti_launch.py) and
one test LMS of our own (tests/lti_platform.py: its key pair made here, its key
set, token endpoint and gradebook). An instructor and a learner launch through
the LMS: login initiation, the platform's answer, the launch. The learner lands
on their server starting by itself for the chapter's nbgitpuller link, and the
chapter opens in their home; they answer chapter 02 and submit it; the
instructor (a hub admin by the LMS's role) autogrades it with nbgrader; then
tools/lms_grades.py sends the score, twice, and the LMS holds one score, equal
to nbgrader's. Then every bad launch is refused with a 4xx, a log line, and no
user created.
"""

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import jwt
import nbformat
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from lti_platform import CLIENT_ID, DEPLOYMENT_ID, INSTRUCTOR_ROLE, LtiTestPlatform
from test_hub_nbgrader import answer, nbgrader

from tools import learner_repo
from tools.class_hub import Hub, nbgitpuller_link
from tools.hub_client import Learner
from tools.lms_grades import send_scores
from tools.local_servers import free_port
from tools.lti import hub_user_name, read_launches, tool_key

pytestmark = pytest.mark.usefixtures("hub_installed")  # skips, or fails under CI, without the hub

REPO = Path(__file__).resolve().parent.parent
CHAPTER = "02_masked_softmax.ipynb"
FOLDER = "attention-notebooks"
ASSIGNMENT, COURSE = "ch02", "attention"
TEACHER, LEARNER, OTHER = "teacher-7", "learner-1", "learner-2"


def launch(hub, platform, sub, target, browser=None, post=None, **claims):
    """Login initiation, then the launch as the platform would post it; returns (browser, auth request, answer).

    ``post`` changes the form posted to the launch URL; ``claims`` the id_token's claims.
    """
    browser = browser or requests.Session()
    start = browser.get(f"{hub.url}/hub/lti13/oauth_login", allow_redirects=False, timeout=30,
                        params={"iss": platform.url, "login_hint": sub or "anonymous", "target_link_uri": target,
                                "client_id": CLIENT_ID, "lti_deployment_id": DEPLOYMENT_ID})
    assert start.status_code == 302 and start.headers["Location"].startswith(f"{platform.url}/auth?"), start.text
    auth = browser.get(start.headers["Location"], timeout=30).json()  # the platform's authorization URL
    assert auth["client_id"] == CLIENT_ID and auth["redirect_uri"] == f"{hub.url}/hub/lti13/oauth_callback"
    form = {"id_token": platform.id_token(auth["nonce"], sub=sub, **claims), "state": auth["state"]}
    form.update(post or {})
    form = {key: value for key, value in form.items() if value is not None}
    answered = browser.post(auth["redirect_uri"], data=form, allow_redirects=False, timeout=60)
    return browser, form, answered


def enter(hub, browser, sub, landing):
    """What the browser does after the launch: follow it to the hub's page for the server starting by itself."""
    page = browser.get(f"{hub.url}{landing}", timeout=60)
    learner = Learner(hub.url, hub_user_name(sub), None)
    learner.browser = browser
    return page, learner


@pytest.fixture(scope="module")
def lms(tmp_path_factory):
    root = tmp_path_factory.mktemp("hub-lti")
    platform = LtiTestPlatform()
    registration = root / "lti.json"
    registration.write_text(json.dumps(platform.registration()))
    content = root / FOLDER
    learner_repo.build_learner_repo(learner_repo.chapter_sources(), content)
    exchange = root / "exchange"
    exchange.mkdir(mode=0o777)
    hub = Hub(root / "hub", free_port(), lti=registration, max_servers=3).wait_ready()
    platform.tool_key_set_url = f"{hub.url}/hub/lti13/jwks"
    link = nbgitpuller_link(hub.url, content, path=CHAPTER)
    try:
        world = {"root": root, "hub": hub, "platform": platform, "link": link, "registration": registration,
                 "exchange": exchange}
        # The instructor launches and is made an admin by the LMS's role.
        browser, _, answered = launch(hub, platform, TEACHER, link, roles=(INSTRUCTOR_ROLE,))
        world["teacher_launch"] = answered
        _, teacher = enter(hub, browser, TEACHER, answered.headers["Location"])
        world["teacher"] = teacher.take_token().start()
        # The learner launches the chapter's link.
        browser, _, answered = launch(hub, platform, LEARNER, link)
        world["learner_launch"] = answered
        world["landing"], learner = enter(hub, browser, LEARNER, answered.headers["Location"])
        world["learner"] = learner.take_token().start()
        world["pulled"] = learner.follow(link)
        yield world
    finally:
        hub.stop()
        platform.close()


def users(world):
    response = world["teacher"].api.get(f"{world['hub'].url}/hub/api/users", timeout=30)
    assert response.ok, response.text
    return {user["name"]: user for user in response.json()}


def test_a_launch_lands_on_the_chapter_link_with_the_server_starting_by_itself(lms):
    assert lms["learner_launch"].status_code == 302
    landing = lms["learner_launch"].headers["Location"]
    assert landing.startswith("/hub/user-redirect/git-pull?") and CHAPTER in landing
    # The hub started the server at once, and its progress page goes on to the link when it is ready.
    page = urlsplit(lms["landing"].url)
    assert lms["landing"].status_code == 200 and page.path == f"/hub/spawn-pending/{LEARNER}"
    assert parse_qs(page.query)["next"][0].startswith(f"/user/{LEARNER}/git-pull?")
    assert lms["pulled"][0] == "finished", lms["pulled"]
    assert lms["learner"].exists(f"{FOLDER}/{CHAPTER}")


def test_names_come_from_the_lms_user_id_and_roles_make_the_admin(lms):
    found = users(lms)
    assert found[TEACHER]["admin"] is True and found[TEACHER]["groups"] == [f"formgrade-{COURSE}"]
    assert found[LEARNER]["admin"] is False and found[LEARNER]["groups"] == [f"nbgrader-{COURSE}"]
    # The display name and the e-mail the LMS sent are in no user name.
    assert not any("@" in name or "Name of" in name for name in found)


def test_the_tool_key_set_is_served_and_is_the_key_in_the_state_folder(lms):
    served = requests.get(f"{lms['hub'].url}/hub/lti13/jwks", timeout=30).json()
    key = jwt.PyJWK(served["keys"][0]).key
    assert key.public_numbers() == tool_key(lms["root"] / "hub").public_key().public_numbers()
    assert "d" not in served["keys"][0]  # the public half only
    assert (lms["root"] / "hub" / "lti_tool_key.pem").stat().st_mode & 0o077 == 0


def test_a_learner_reaches_neither_another_server_nor_the_admin_api_nor_the_formgrader(lms):
    hub, learner = lms["hub"].url, lms["learner"]
    assert learner.api.get(f"{hub}/user/{TEACHER}/api/contents", timeout=30).status_code == 403
    # The formgrader: not served by a learner's own server (nbgrader's server extensions are off, Makefile);
    # the instructor's server, where it could run, refuses the learner above whatever the path.
    assert learner.api.get(f"{hub}/user/{LEARNER}/formgrader", timeout=30, allow_redirects=False).status_code == 404
    assert learner.api.get(f"{hub}/hub/api/users", timeout=30).status_code == 403


def test_the_score_nbgrader_gives_reaches_the_lms_once_even_sent_twice(lms):
    root, platform = lms["root"], lms["platform"]
    teacher, learner, exchange = lms["teacher"], lms["learner"], lms["exchange"]
    source = nbformat.read(REPO / "notebooks" / CHAPTER, as_version=4)
    for folder in ("course", "course/source", f"course/source/{ASSIGNMENT}"):
        teacher.mkdir(folder)
    teacher.save(f"course/source/{ASSIGNMENT}/{CHAPTER}", source)
    desk = teacher.kernel("course/desk.ipynb")
    try:
        for step in ("generate_assignment", "release_assignment"):
            nbgrader(desk, step, ASSIGNMENT, exchange=exchange)
        kernel = learner.kernel("desk.ipynb")
        try:
            nbgrader(kernel, "fetch_assignment", ASSIGNMENT, exchange=exchange, student=True)
            path = f"{ASSIGNMENT}/{CHAPTER}"
            learner.save(path, answer(learner.notebook(path), "right"))
            nbgrader(kernel, "submit", ASSIGNMENT, exchange=exchange, student=True)
        finally:
            kernel.close()
        for step in ("collect", "autograde"):
            nbgrader(desk, step, ASSIGNMENT, exchange=exchange)
    finally:
        desk.close()
    gradebook = root / "hub" / "home" / TEACHER / "course" / "gradebook.db"
    command = [sys.executable, "-m", "tools.lms_grades", ASSIGNMENT, "--gradebook", str(gradebook),
               "--registration", str(lms["registration"]), "--state", str(root / "hub")]
    for _ in range(2):
        sent = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
        assert sent.returncode == 0, sent.stderr
        assert sent.stdout == f"{LEARNER}: sent 3 / 3 to {platform.lineitem(ASSIGNMENT)}\n"
    assert len(platform.score_posts) == 2
    held = platform.scores["/lineitems/ch02"]
    assert list(held) == [LEARNER]
    assert {key: held[LEARNER][key] for key in ("scoreGiven", "scoreMaximum", "activityProgress",
                                                "gradingProgress", "userId")} == {
        "scoreGiven": 3.0, "scoreMaximum": 3.0, "activityProgress": "Completed",
        "gradingProgress": "FullyGraded", "userId": LEARNER}


def test_a_learner_who_never_launched_gets_nothing(lms):
    platform = lms["platform"]
    before = len(platform.score_posts)
    said = []
    outcome = send_scores(ASSIGNMENT, {"never-came": (2.0, 3.0)}, read_launches(lms["root"] / "hub"),
                          platform.registration(), tool_key(lms["root"] / "hub"), say=said.append)
    assert outcome == {"never-came": "not sent: never launched this assignment from the LMS"}
    assert said == ["never-came: not sent: never launched this assignment from the LMS"]
    assert len(platform.score_posts) == before


OTHER_KEY = rsa.generate_private_key(public_exponent=65537, key_size=2048)
EXPIRED = {"iat": 1_000_000_000, "exp": 1_000_000_300}
BAD_LAUNCHES = {
    # name: (id_token claims, changes to the posted form, the status, the reason logged)
    "forged": ({"key": OTHER_KEY}, {}, 400, "Signature verification failed"),
    "wrong-issuer": ({"iss": "https://lms.invalid"}, {}, 400, "Invalid issuer"),
    "wrong-audience": ({"aud": "another-client"}, {}, 401, "Audience doesn't match"),
    "unknown-deployment": ({"deployment_id": "deployment-9"}, {}, 403, "unknown deployment ID 'deployment-9'"),
    "expired": (EXPIRED, {}, 400, "Signature has expired"),
    "no-state": ({}, {"state": None}, 400, "Required LTI 1.3 arg state not in request"),
    "other-state": ({}, {"state": "c3RhdGU="}, 400, "OAuth state mismatch"),
    "no-user-id": ({}, {}, 400, "no user ID"),
}


def refused_log_lines(lms):
    log = (lms["root"] / "hub" / "jupyterhub.log").read_text(errors="replace")
    return [line for line in log.splitlines() if "LTI launch refused" in line]


@pytest.mark.parametrize("case", sorted(BAD_LAUNCHES))
def test_a_bad_launch_is_refused_logged_and_creates_nobody(lms, case):
    claims, post, status, reason = BAD_LAUNCHES[case]
    sub = f"bad-{case}"
    _, _, answered = launch(lms["hub"], lms["platform"], None if case == "no-user-id" else sub, lms["link"],
                            post=post, **claims)
    assert answered.status_code == status, answered.text[:300]
    assert any(reason in line for line in refused_log_lines(lms)), (reason, refused_log_lines(lms)[-3:])
    assert sub not in users(lms)


def test_a_replayed_launch_is_refused_with_or_without_the_browser_cookies(lms):
    hub, platform = lms["hub"], lms["platform"]
    browser = requests.Session()
    start = browser.get(f"{hub.url}/hub/lti13/oauth_login", allow_redirects=False, timeout=30,
                        params={"iss": platform.url, "login_hint": OTHER, "target_link_uri": lms["link"]})
    assert start.status_code == 302
    auth = browser.get(start.headers["Location"], timeout=30).json()
    form = {"id_token": platform.id_token(auth["nonce"], sub=OTHER), "state": auth["state"]}
    stolen = browser.cookies.copy()
    assert browser.post(auth["redirect_uri"], data=form, allow_redirects=False, timeout=60).status_code == 302
    with_cookies = requests.Session()
    with_cookies.cookies.update(stolen)
    assert with_cookies.post(auth["redirect_uri"], data=form, timeout=60).status_code == 400
    assert any("nonce was already used" in line for line in refused_log_lines(lms))
    assert requests.post(auth["redirect_uri"], data=form, timeout=60).status_code == 400
    assert any("OAuth state missing from cookies" in line for line in refused_log_lines(lms))


def test_the_login_initiation_refuses_missing_arguments_and_keeps_the_landing_on_the_hub(lms):
    hub, platform = lms["hub"], lms["platform"]
    start = requests.get(f"{hub.url}/hub/lti13/oauth_login", params={"iss": platform.url, "login_hint": "x"},
                         allow_redirects=False, timeout=30)
    assert start.status_code == 400 and "target_link_uri" in start.text
    assert requests.get(f"{hub.url}/hub/lti13/oauth_callback", timeout=30).status_code == 405
    # A target link on another host lands on that path of the hub, never on the other host.
    _, _, answered = launch(hub, platform, LEARNER, "https://elsewhere.invalid/hub/home")
    assert answered.status_code == 302 and answered.headers["Location"] == "/hub/home"
