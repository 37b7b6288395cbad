"""Send an assignment's nbgrader scores to the LMS's gradebook (LTI Advantage AGS), or write a CSV to import.

    python -m tools.lms_grades ASSIGNMENT --gradebook COURSE/gradebook.db --registration hub/lti.json
                               [--state hub/state] [--csv FILE --csv-format canvas|moodle]

Run it after `nbgrader autograde ASSIGNMENT` (docs/lms.md). Each learner's
score goes to the LMS line item named in that learner's launch of the
assignment (the launch's custom parameter ``assignment``, recorded by the hub
in the state folder). A learner who never launched the assignment from the LMS
gets nothing. The LMS replaces a learner's score with the newest one, so a
second run leaves one score per learner. The access token comes from the
platform's token URL (OAuth2 client credentials, with a JWT signed by the
tool's key: PyJWT signs, requests sends). With ``--csv`` nothing is sent: the
scores are written in Canvas's or Moodle's gradebook-import columns instead.
"""

import argparse
import csv
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import jwt
import requests

from tools.lti import KEY_FILE, SCORE_SCOPE, key_id, load_registration, read_launches, tool_key

REPO = Path(__file__).resolve().parent.parent
SCORE_TYPE = "application/vnd.ims.lis.v1.score+json"
ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
# The columns each LMS's gradebook import reads: Canvas matches a learner by its SIS user ID (or its
# own user ID), Moodle by the e-mail address that the import's mapping step names.
CSV_FORMATS = {
    "canvas": ("Student", "ID", "SIS User ID", "SIS Login ID", "Section"),
    "moodle": ("Email address",),
}


class GradesError(RuntimeError):
    """The platform refused the token or a score; the message says which, and what it answered."""


def nbgrader_scores(gradebook, assignment):
    """{nbgrader student ID: (score, maximum)} for every submission of ``assignment`` in the gradebook."""
    from nbgrader.api import Gradebook, MissingEntry  # nbgrader: the instructor's tool, loaded only here

    with Gradebook(f"sqlite:///{Path(gradebook).resolve()}") as book:
        try:
            submissions = book.assignment_submissions(assignment)
        except MissingEntry:
            raise GradesError(f"assignment {assignment!r}: not in the gradebook {gradebook}") from None
        return {submission.student.id: (float(submission.score), float(submission.max_score))
                for submission in submissions}


def access_token(registration, private_key, scope=SCORE_SCOPE, lifetime=300):
    """An AGS access token from the platform: OAuth2 client credentials with a signed JWT assertion."""
    now = int(time.time())
    assertion = jwt.encode({"iss": registration["client_id"], "sub": registration["client_id"],
                            "aud": registration.get("token_audience") or registration["token_url"],
                            "iat": now, "exp": now + lifetime, "jti": uuid.uuid4().hex},
                           private_key, algorithm="RS256", headers={"kid": key_id(private_key.public_key())})
    response = requests.post(registration["token_url"], timeout=30, data={
        "grant_type": "client_credentials", "client_assertion_type": ASSERTION_TYPE,
        "client_assertion": assertion, "scope": scope})
    if not response.ok or "access_token" not in response.json():
        raise GradesError(f"the access token from {registration['token_url']}: HTTP {response.status_code}: "
                          f"{response.text[:300]}")
    return response.json()["access_token"]


def scores_url(lineitem):
    """The line item's scores endpoint: ``/scores`` added to its path, its query kept (AGS 2.0, section 3.4)."""
    parts = urlsplit(lineitem)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + "/scores"))


def score_body(user_id, score, maximum):
    """One AGS score: the platform replaces the learner's earlier score with it."""
    return {"userId": user_id, "scoreGiven": score, "scoreMaximum": maximum,
            "activityProgress": "Completed", "gradingProgress": "FullyGraded",
            "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds")}


def send_scores(assignment, scores, launches, registration, private_key, say=print):
    """Post each learner's score to the line item of their launch; returns {hub user: what happened}.

    ``scores`` is {hub user: (score, maximum)}; ``launches`` what tools/lti.py recorded.
    """
    token, outcome = None, {}
    for user in sorted(scores):
        score, maximum = scores[user]
        launch = launches.get(user, {}).get("assignments", {}).get(assignment)
        if launch is None:
            outcome[user] = "not sent: never launched this assignment from the LMS"
        elif not launch.get("lineitem") or SCORE_SCOPE not in launch.get("ags_scope", []):
            outcome[user] = "not sent: the LMS's launch offered no gradebook column (AGS); use --csv"
        else:
            token = token or access_token(registration, private_key)
            response = requests.post(scores_url(launch["lineitem"]), json=score_body(launch["sub"], score, maximum),
                                     headers={"Authorization": f"Bearer {token}", "Content-Type": SCORE_TYPE},
                                     timeout=30)
            if not response.ok:
                raise GradesError(f"the score of {user} to {launch['lineitem']}: HTTP {response.status_code}: "
                                  f"{response.text[:300]}")
            outcome[user] = f"sent {score:g} / {maximum:g} to {launch['lineitem']}"
        say(f"{user}: {outcome[user]}")
    return outcome


def write_csv(path, assignment, scores, launches, lms):
    """The scores in ``lms``'s gradebook-import columns (CSV_FORMATS), one row per learner who launched."""
    columns = CSV_FORMATS[lms]
    rows = []
    for user in sorted(scores):
        launch = launches.get(user, {}).get("assignments", {}).get(assignment) or launches.get(user, {}).get("last")
        if launch is None:
            continue  # who they are in the LMS is known from a launch only
        if lms == "canvas":
            row = [launch.get("name") or "", launch.get("lms_user_id") or "", launch.get("sis_id") or "", "", ""]
        else:
            row = [launch.get("email") or ""]
        rows.append([*row, f"{scores[user][0]:g}"])
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow([*columns, assignment])
        writer.writerows(rows)
    return rows


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("assignment", help="the nbgrader assignment, e.g. ch02 (the LMS link's custom parameter)")
    parser.add_argument("--gradebook", type=Path, required=True, help="nbgrader's gradebook.db, in the course folder")
    parser.add_argument("--registration", type=Path, default=REPO / "hub" / "lti.json",
                        help="the hub's LTI registration (default %(default)s)")
    parser.add_argument("--state", type=Path, default=REPO / "hub" / "state",
                        help="the hub's state folder: the tool's key and the launches (default %(default)s)")
    parser.add_argument("--csv", type=Path, help="write a gradebook-import CSV here instead of sending")
    parser.add_argument("--csv-format", choices=sorted(CSV_FORMATS), default="canvas")
    args = parser.parse_args(argv)
    try:
        if not args.csv:
            registration = load_registration(args.registration)
            if not (args.state / KEY_FILE).exists():  # a new key would be one the LMS does not know
                raise GradesError(f"--state {args.state}: no tool key ({KEY_FILE}) there; name the state folder "
                                  "of the hub the learners launched")
        scores = nbgrader_scores(args.gradebook, args.assignment)
        launches = read_launches(args.state)
        if args.csv:
            rows = write_csv(args.csv, args.assignment, scores, launches, args.csv_format)
            print(f"Wrote {len(rows)} learners' scores to {args.csv} ({args.csv_format}'s gradebook import).")
        else:
            send_scores(args.assignment, scores, launches, registration, tool_key(args.state))
    except (GradesError, ValueError, requests.RequestException) as error:
        sys.exit(f"error: {error}")

if __name__ == "__main__":
    main()
