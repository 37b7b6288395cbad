"""The class report: which mistake how many learners made, one HTML page for an instructor.

    python -m tools.class_report SUBMISSIONS [--out class-report.html] [--names]
        [--chapter 02] [--language en] [--timeout 120] [--memory-mb 4096] [--jobs 2]

SUBMISSIONS is a folder: nbgrader's ``submitted/`` or ``autograded/`` (or the
course folder holding them), Otter's submissions folder (notebooks or the zip
files of ``otter.Notebook.export``), or plain notebooks. Every notebook of the
report's chapter runs alone in a child process (``tools/class_report_child.py``)
with a time and a memory limit, in a temporary folder that holds only its own
file; then the chapter's checks are called on its exercise functions. The page
counts, for each exercise, the answers that passed, the ones not attempted, each
mistake a check named (in the check's own words), and errors; and the answers
to the chapter's Why? question that the notebooks saved. Learners appear as
counts only, unless ``--names``. The page needs no network: its CSS and its
charts (SVG) are inline. docs/instructors.md ("The class report") says more.
"""

import argparse
import collections
import concurrent.futures
import contextlib
import gettext
import html
import json
import multiprocessing
import os
import re
import secrets
import shutil
import signal
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

from d2lmini.exercises._feedback import ERROR, MISTAKE, NOT_ATTEMPTED, PASSED

REPO = Path(__file__).resolve().parent.parent
CHAPTERS = {"en": REPO / "notebooks", "pt_BR": REPO / "notebooks" / "pt"}
CHECK_CELL = re.compile(r"\b(ch(\d\d))\s*\.\s*(check_\w+)\s*\(\s*(\w+)\s*\)")
CHAPTER_HINT = re.compile(r"\bch(\d\d)\s*\.\s*check_|\bquestions\.ask\(\s*[\"'](\d\d)[\"']")
EXERCISE_HEADING = re.compile(r"^#+\s*((?:Exercise|Exercício)\s+\d+\.\d+.*)$", re.MULTILINE)
# Files nbgrader keeps beside a submission, and folders Jupyter leaves behind: not submissions.
COMPANIONS = {"timestamp.txt"}
SKIPPED_FOLDERS = {".ipynb_checkpoints", "__pycache__"}
NBGRADER_FOLDERS = ("submitted", "autograded")
NOTEBOOK_LIMIT = 50 * 2 ** 20  # bytes: a bigger "notebook" is refused unread
DEFAULT_TIMEOUT, DEFAULT_MEMORY_MB, FILE_LIMIT = 120, 4096, 64 * 2 ** 20
# What happened to each check of a submission: d2lmini.exercises.outcome's statuses, then the function
# missing from the notebook (the child's word) and the notebook not run to the end.
MISSING, NOT_CHECKED = "missing", "not checked"
ORDER = [PASSED, NOT_ATTEMPTED, MISTAKE, ERROR, MISSING, NOT_CHECKED]
COLOURS = {PASSED: "#1a7f37", NOT_ATTEMPTED: "#6e7781", MISTAKE: "#bc4c00", ERROR: "#cf222e",
           MISSING: "#8250df", NOT_CHECKED: "#57606a"}


def _(message):
    """The report's words in its language (d2lmini's catalogue, the report's messages among them)."""
    from d2lmini.i18n import _ as translate
    return translate(message)


# ------------------------------------------------------------------------------------------- the chapter

@dataclass
class Exercise:
    label: str  # "Exercise 2.1 · Masked mean (★)", from the heading above it
    module: str  # "ch02"
    check: str  # "check_masked_mean"
    function: str  # "masked_mean"


@dataclass
class Chapter:
    number: str
    title: str
    exercises: list
    options: list  # the Why? question's options, in the report's language
    answer: int  # the index of the right option


def chapter_file(number, language="en"):
    found = sorted(CHAPTERS.get(language, CHAPTERS["en"]).glob(f"{number}_*.ipynb"))
    return found[0] if found else None


def _source(cell):
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def read_chapter(number, language="en"):
    """The chapter's exercises (label, check and function, from its check cells) and its Why? question."""
    from d2lmini.exercises.questions import QUESTIONS
    path = chapter_file(number, language) or chapter_file(number)
    notebook = json.loads(path.read_text(encoding="utf-8"))
    title, label, exercises = number, None, []
    for cell in notebook["cells"]:
        source = _source(cell)
        if cell["cell_type"] == "markdown":
            if title == number and source.startswith("# "):
                title = source.splitlines()[0][2:].strip()
            heading = EXERCISE_HEADING.search(source)
            label = heading.group(1).strip() if heading else label
        elif "check" in cell.get("metadata", {}).get("tags", []):
            for module, _number, check, function in CHECK_CELL.findall(source):
                exercises.append(Exercise(label or function, module, check, function))
    question = QUESTIONS.get(number)
    options = [_(option) for option in question.options] if question else []
    return Chapter(number, title, exercises, options, question.answer if question else -1)


# ------------------------------------------------------------------------------------------- the folder

@dataclass
class Submission:
    learner: str  # the student's folder (nbgrader), or the file's name
    path: str  # relative to the submissions folder
    notebook: dict = None
    chapter: str = None
    problem: str = None  # why it is not run, when it is not
    status: str = None  # after the run: "checked", "timed out", "crashed"
    results: dict = field(default_factory=dict)  # check name -> {"status", "message"}
    refused: list = field(default_factory=list)
    cell_errors: int = 0
    memory_error: bool = False
    language: str = "en"
    why: int = None  # the option the saved Why? widget had picked


def learner_of(relative):
    """nbgrader's <student> (the folder after submitted/ or autograded/), a learner's folder, or the file's name."""
    parts = relative.parts
    for index, part in enumerate(parts[:-1]):
        if part in NBGRADER_FOLDERS:
            parts = parts[index + 1:]
            break
    return parts[0] if len(parts) > 1 else Path(parts[0]).stem


def _notebook_bytes(path):
    """The notebook's bytes: the file itself, or the one notebook in an Otter zip; a problem's words otherwise."""
    if path.stat().st_size > NOTEBOOK_LIMIT:
        return None, _("larger than 50 MB: not read")
    if path.suffix != ".zip":
        return path.read_bytes(), None
    try:
        with zipfile.ZipFile(path) as archive:
            inside = [info for info in archive.infolist() if info.filename.endswith(".ipynb")
                      and not info.filename.startswith(("__MACOSX", "."))]
            if len(inside) != 1:
                return None, _("a zip file without exactly one notebook in it")
            if inside[0].file_size > NOTEBOOK_LIMIT:
                return None, _("larger than 50 MB: not read")
            return archive.read(inside[0]), None
    except (zipfile.BadZipFile, OSError):
        return None, _("not a notebook")


def _parse(data):
    try:
        notebook = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        return None
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        return None
    if not all(isinstance(cell, dict) and isinstance(cell.get("cell_type"), str) for cell in notebook["cells"]):
        return None
    return notebook


def chapter_of(notebook, name):
    """The chapter a notebook is: the checks its cells call, else its Why? question, else its file's name."""
    found = collections.Counter()
    for cell in notebook["cells"]:
        if cell["cell_type"] == "code":
            for check, ask in CHAPTER_HINT.findall(_source(cell)):
                found[check or ask] += 1
    if found:
        return found.most_common(1)[0][0]
    named = re.match(r"(\d\d)_", name)
    return named.group(1) if named else None


def why_answer(notebook, chapter):
    """The option of the chapter's Why? question that the notebook's saved widget state had picked, or None.

    JupyterLab saves widget state in the notebook's metadata only when its
    setting *Save Widget State Automatically* is on; without it, nothing is recorded.
    """
    from d2lmini.exercises.questions import QUESTIONS
    from d2lmini.i18n import DOMAIN, LOCALE
    question = QUESTIONS.get(chapter)
    if question is None:
        return None
    texts = {option: index for index, option in enumerate(question.options)}
    for language in ("pt_BR",):
        try:
            catalogue = gettext.translation(DOMAIN, LOCALE, [language])
        except OSError:
            continue
        texts.update({catalogue.gettext(option): index for index, option in enumerate(question.options)})
    state = (notebook.get("metadata", {}).get("widgets", {})
             .get("application/vnd.jupyter.widget-state+json", {}).get("state", {}))
    for model in state.values() if isinstance(state, dict) else ():
        values = model.get("state", {}) if isinstance(model, dict) else {}
        labels = values.get("_options_labels") if isinstance(values, dict) else None
        if not isinstance(labels, list) or len(labels) != len(question.options):
            continue
        if all(isinstance(label, str) and label[4:] in texts for label in labels):
            index = values.get("index")
            if isinstance(index, int) and 0 <= index < len(labels):
                return texts[labels[index][4:]]
    return None


def gather(folder):
    """Every submission in ``folder``, read and sorted by path; files that are not notebooks get a problem."""
    folder = Path(folder)
    found = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if any(part.startswith(".") or part in SKIPPED_FOLDERS for part in relative.parts) or not path.is_file():
            continue
        if path.name in COMPANIONS:
            continue
        submission = Submission(learner_of(relative), str(relative))
        found.append(submission)
        if path.suffix not in (".ipynb", ".zip"):
            submission.problem = _("not a notebook")
            continue
        data, problem = _notebook_bytes(path)
        submission.notebook = _parse(data) if data is not None else None
        if submission.notebook is None:
            submission.problem = problem or _("not a notebook")
            continue
        submission.chapter = chapter_of(submission.notebook, path.name)
        if submission.chapter is None or chapter_file(submission.chapter) is None:
            submission.problem = _("a notebook that is no chapter of this collection")
    return found


# ------------------------------------------------------------------------------------------- the runs

def _fork_server():
    """``multiprocessing``'s fork server, with torch, IPython and d2lmini imported once for every submission."""
    context = multiprocessing.get_context("forkserver")
    # The caller's main module too, so that a child does not run it again (a script that calls the report
    # must guard its work with `if __name__ == "__main__":`, as multiprocessing requires).
    context.set_forkserver_preload(["__main__", "tools.class_report_child"])
    return context


def run_submission(context, submission, chapter, workdir, index, forbidden, timeout, memory_mb):
    """Run one submission in its own process and folder; fill in its status and its checks' outcomes."""
    folder = Path(workdir) / f"{index:04d}"
    folder.mkdir()
    (folder / "submission.ipynb").write_text(json.dumps(submission.notebook), encoding="utf-8")
    token = secrets.token_hex(16)
    # Only what a notebook needs from the environment: no variable of the instructor's shell reaches it.
    env = {name: os.environ[name] for name in ("PATH", "HOME", "LANG", "LC_ALL", "MPLCONFIGDIR", "XDG_CACHE_HOME")
           if name in os.environ}
    env.update(PYTHONPATH=str(REPO), MPLBACKEND="Agg", OMP_NUM_THREADS="1")
    request = {"notebook": "submission.ipynb", "token": token, "forbidden": forbidden, "env": env,
               "checks": [(e.module, e.check, e.function) for e in chapter.exercises],
               "memory_bytes": memory_mb * 2 ** 20, "timeout_s": timeout, "file_bytes": FILE_LIMIT}
    process = context.Process(target=_child, args=(request, str(folder)), daemon=True)
    process.start()
    process.join(timeout)
    if process.exitcode is None:  # still running at the time limit: stop it and whatever it started
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        process.kill()
        process.join()
        submission.status = "timed out"
        return submission
    output = folder / "output.txt"
    text = output.read_bytes()[-2 ** 20:].decode("utf-8", errors="replace") if output.exists() else ""
    line = next((line for line in reversed(text.splitlines()) if line.startswith(token)), None)
    if process.exitcode == -signal.SIGXCPU:  # its CPU time ran past the time limit
        submission.status = "timed out"
    elif line is None:
        submission.status = "crashed"
    else:
        result = json.loads(line[len(token):])
        submission.status = "checked"
        submission.results, submission.refused = result["results"], result["refused"]
        submission.cell_errors, submission.memory_error = result["cell_errors"], result["memory_error"]
        submission.language = result["language"]
    return submission


def _child(request, folder):
    from tools.class_report_child import child
    child(request, folder)


def run_all(submissions, chapter, folder, timeout=DEFAULT_TIMEOUT, memory_mb=DEFAULT_MEMORY_MB, jobs=2):
    """Run the chapter's submissions, ``jobs`` at a time, each in a folder of its own under one temporary folder."""
    workdir = Path(tempfile.mkdtemp(prefix="class-report-"))
    forbidden = [str(Path(folder).resolve()), str(workdir.resolve())]
    context = _fork_server()
    try:
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
            list(pool.map(lambda item: run_submission(context, item[1], chapter, workdir, item[0], forbidden,
                                                      timeout, memory_mb), enumerate(submissions)))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return submissions


# ------------------------------------------------------------------------------------------- the counts

def tally(chapter, submissions):
    """For each exercise, the rows of its table: (status, message, learners), the most frequent first in a status."""
    tables = []
    for exercise in chapter.exercises:
        rows = collections.defaultdict(list)
        for submission in submissions:
            if submission.status != "checked":
                rows[(NOT_CHECKED, _("the notebook did not finish running"))].append(submission.learner)
                continue
            result = submission.results.get(exercise.check, {"status": MISSING, "message": exercise.function})
            status, message = result["status"], result["message"]
            if status == MISSING:
                message = _("`{function}` is not defined: renamed or deleted").format(function=message)
            elif status == ERROR:  # the learner's own exception, counted by its type: its text differs per learner
                message = message.split(":")[0]
            elif status in (PASSED, NOT_ATTEMPTED):
                message = ""
            rows[(status, message)].append(submission.learner)
        ordered = sorted(rows.items(), key=lambda item: (ORDER.index(item[0][0]), -len(item[1]), item[0][1]))
        tables.append((exercise, [(status, message, learners) for (status, message), learners in ordered]))
    return tables


def status_words(status):
    return {PASSED: _("passed"), NOT_ATTEMPTED: _("not attempted"), MISTAKE: _("mistake the check named"),
            ERROR: _("error in the learner's code"), MISSING: _("function missing"),
            NOT_CHECKED: _("not checked")}[status]


# ------------------------------------------------------------------------------------------- the page

CSS = """
body {font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem;
      color: #1f2328; background: #fff; line-height: 1.45}
table {border-collapse: collapse; margin: 0.5rem 0 1rem; width: 100%}
th, td {border: 1px solid #d0d7de; padding: 0.3rem 0.5rem; text-align: left; vertical-align: top}
th {background: #f6f8fa}
td.count, th.count {text-align: right; white-space: nowrap; width: 5rem}
.status {white-space: nowrap; font-weight: 600}
.learners {font-size: 0.9em; color: #57606a}
.note {color: #57606a}
svg {max-width: 100%; height: auto}
"""


def _chart(exercise, rows, total, key):
    """A bar per row of the table, drawn as inline SVG, with a title and a description as its text alternative."""
    width, label_height, bar_height, gap = 720, 16, 14, 10
    row_height = label_height + bar_height + gap
    height = row_height * len(rows) + 4
    summary = "; ".join(f"{status_words(status)}{': ' + message if message else ''}: {len(learners)}"
                        for status, message, learners in rows)
    title = _("{exercise}: what the check said (submissions: {total})").format(exercise=exercise.label, total=total)
    parts = [f'<svg role="img" aria-labelledby="title-{key} desc-{key}" viewBox="0 0 {width} {height}" '
             f'width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">',
             f'<title id="title-{key}">{html.escape(title)}</title>',
             f'<desc id="desc-{key}">{html.escape(summary)}</desc>']
    for index, (status, message, learners) in enumerate(rows):
        y = index * row_height
        text = status_words(status) + (f": {message}" if message else "")
        text = text if len(text) <= 110 else text[:109] + "…"
        bar = 0 if not total else round((width - 60) * len(learners) / total)
        parts += [f'<text x="0" y="{y + 12}" font-size="12" fill="#1f2328">{html.escape(text)}</text>',
                  f'<rect x="0" y="{y + label_height}" width="{max(bar, 1)}" height="{bar_height}" '
                  f'fill="{COLOURS[status]}"/>',
                  f'<text x="{bar + 6}" y="{y + label_height + 11}" font-size="12" '
                  f'fill="#1f2328">{len(learners)}</text>']
    return "\n".join(parts + ["</svg>"])


def _learners(learners, names):
    return f'<td class="learners">{html.escape(", ".join(sorted(learners)))}</td>' if names else ""


def render(chapter, submissions, others, names=False, timeout=DEFAULT_TIMEOUT, memory_mb=DEFAULT_MEMORY_MB):
    """The report as one HTML page: ``submissions`` of the chapter, run; ``others``, files not run, with why."""
    from d2lmini.i18n import current_language
    total = len(submissions)
    intro = _("Submissions of this chapter run: {total}, each alone, with a time limit of {timeout} s and a "
              "memory limit of {memory} MB.").format(total=total, timeout=timeout, memory=memory_mb)
    learners, count, title = _("learners"), _("count"), _("Class report: {chapter}").format(chapter=chapter.title)
    names_header = f"<th>{learners}</th>" if names else ""
    lines = [f'<!DOCTYPE html>\n<html lang="{current_language().replace("_", "-")}">\n<head>\n<meta charset="utf-8">',
            f"<title>{html.escape(title)}</title>",
            f"<style>{CSS}</style>\n</head>\n<body>\n<main>",
            f"<h1>{html.escape(title)}</h1>",
            f"<p>{html.escape(intro)}</p>"]
    # The submissions that did not run to the end, and the files that were not run at all.
    problems = collections.defaultdict(list)
    for submission in submissions:
        if submission.status == "timed out":
            problems[_("stopped at the time limit (it hangs, or is too slow)")].append(submission)
        elif submission.status == "crashed":
            problems[_("its process ended before the checks ran (a crash, or the memory limit)")].append(submission)
        if submission.refused:
            problems[_("tried to read files of the submissions or to start a process: refused")].append(submission)
        if submission.status == "checked" and submission.memory_error:
            problems[_("ran out of its memory limit in a cell")].append(submission)
    for submission in others:
        problems[submission.problem].append(submission)
    if not total and not others:
        problems[_("the folder holds no submission")] = []
    if problems:
        heading, problem_word = _("Submissions the report could not check fully"), _("problem")
        lines += [f"<h2>{html.escape(heading)}</h2>",
                 f'<table class="problems"><tr><th>{problem_word}</th><th class="count">{count}</th>'
                 f"{names_header}</tr>"]
        for problem, found in problems.items():
            lines.append(f'<tr><td>{html.escape(problem)}</td><td class="count">{len(found)}</td>'
                        f"{_learners([s.learner + ' (' + s.path + ')' for s in found], names)}</tr>")
        lines.append("</table>")
    outcome_word, said_word = _("outcome"), _("what the check said")
    for number, (exercise, rows) in enumerate(tally(chapter, submissions)):
        key = f"exercise-{number}"
        checked_by = _("`{function}`, checked by {check}").format(function=exercise.function,
                                                                  check=f"{exercise.module}.{exercise.check}")
        lines += [f'<section aria-labelledby="{key}"><h2 id="{key}">{html.escape(exercise.label)}</h2>',
                 f'<p class="note">{html.escape(checked_by)}</p>',
                 f'<table class="outcomes" data-exercise="{html.escape(exercise.check)}">'
                 f'<tr><th>{outcome_word}</th><th>{said_word}</th>'
                 f'<th class="count">{count}</th>{names_header}</tr>']
        for status, message, learners in rows:
            lines.append(f'<tr data-status="{status}"><td class="status">{html.escape(status_words(status))}</td>'
                        f'<td class="message">{html.escape(message)}</td><td class="count">{len(learners)}</td>'
                        f"{_learners(learners, names)}</tr>")
        lines += ["</table>", _chart(exercise, rows, total, key), "</section>"]
    lines += _why_section(chapter, submissions, names)
    lines.append("</main>\n</body>\n</html>\n")
    return "\n".join(lines)


def _why_section(chapter, submissions, names):
    if not chapter.options:
        return []
    picked = collections.defaultdict(list)
    for submission in submissions:
        picked[submission.why].append(submission.learner)
    learners, count, option_word, heading = _("learners"), _("count"), _("option"), _("The Why? question")
    unsaved = _("no answer saved in the notebook")
    names_header = f"<th>{learners}</th>" if names else ""
    note = _("✓ marks the right option. A notebook keeps the option picked only if JupyterLab saved its widget "
             "state (Settings, Save Widget State Automatically).")
    section = [f"<h2>{html.escape(heading)}</h2>",
               f'<table class="why"><tr><th>{option_word}</th><th class="count">{count}</th>{names_header}</tr>']
    for index, option in enumerate(chapter.options):
        mark = " ✓" if index == chapter.answer else ""
        section.append(f'<tr data-option="{index}"><td>({"abcdefgh"[index]}) {html.escape(option)}{mark}</td>'
                       f'<td class="count">{len(picked[index])}</td>{_learners(picked[index], names)}</tr>')
    section += [f'<tr data-option="none"><td>{html.escape(unsaved)}</td>'
                f'<td class="count">{len(picked[None])}</td>{_learners(picked[None], names)}</tr>', "</table>",
                f'<p class="note">{html.escape(note)}</p>']
    return section


# ------------------------------------------------------------------------------------------- the command

def collect(folder, chapter=None, timeout=DEFAULT_TIMEOUT, memory_mb=DEFAULT_MEMORY_MB, jobs=2):
    """Read and run the submissions in ``folder``: (chapter number, the chapter's submissions run, the others).

    The chapter is ``chapter`` or, if None, the one most notebooks are; a
    notebook of another chapter is not run, and says so.
    """
    everything = gather(folder)
    readable = [s for s in everything if s.problem is None]
    if chapter is None:
        counted = collections.Counter(s.chapter for s in readable)
        chapter = counted.most_common(1)[0][0] if counted else None
    for submission in readable:
        if submission.chapter != chapter:
            submission.problem = _("a notebook of chapter {found}, not of chapter {chapter}: not run").format(
                found=submission.chapter, chapter=chapter)
    ours = [s for s in readable if s.problem is None]
    if chapter is not None:
        for submission in ours:
            submission.why = why_answer(submission.notebook, chapter)
        run_all(ours, read_chapter(chapter), folder, timeout, memory_mb, jobs)
    return chapter, ours, [s for s in everything if s.problem is not None]


def report(folder, chapter=None, names=False, language=None, timeout=DEFAULT_TIMEOUT, memory_mb=DEFAULT_MEMORY_MB,
           jobs=2):
    """The report's HTML for the submissions in ``folder``."""
    chapter, ours, others = collect(folder, chapter, timeout, memory_mb, jobs)
    return page(chapter, ours, others, names, language, timeout, memory_mb)


def page(chapter, ours, others, names=False, language=None, timeout=DEFAULT_TIMEOUT, memory_mb=DEFAULT_MEMORY_MB):
    """``render`` in ``language``, or, if None, in the language most submissions ran in (the checks' words')."""
    from d2lmini.i18n import set_language
    if language is None:
        spoken = collections.Counter(s.language for s in ours if s.status == "checked")
        language = spoken.most_common(1)[0][0] if spoken else "en"
    set_language(language)
    read = read_chapter(chapter, language) if chapter else Chapter("", _("no chapter"), [], [], -1)
    return render(read, ours, others, names, timeout, memory_mb)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("submissions", type=Path, help="a folder of submitted notebooks")
    parser.add_argument("--out", type=Path, default=Path("class-report.html"), help="the HTML file to write")
    parser.add_argument("--names", action="store_true", help="name the learners (counts only without it)")
    parser.add_argument("--chapter", help="the chapter, two digits (default: the one most submissions are)")
    parser.add_argument("--language", help="the report's language, en or pt_BR (default: the submissions')")
    parser.add_argument("--timeout", type=int, default=DEFAULT_TIMEOUT, help="seconds each submission may run")
    parser.add_argument("--memory-mb", type=int, default=DEFAULT_MEMORY_MB, help="memory each submission may use")
    parser.add_argument("--jobs", type=int, default=2, help="submissions run at once")
    args = parser.parse_args(argv)
    if not args.submissions.is_dir():
        parser.error(f"SUBMISSIONS must be a folder; {args.submissions} is not one")
    if args.chapter is not None and (not re.fullmatch(r"\d\d", args.chapter) or chapter_file(args.chapter) is None):
        parser.error(f"--chapter must be a chapter's two digits, such as 02; received {args.chapter!r}")
    for name in ("timeout", "memory_mb", "jobs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be a whole number of at least 1; received "
                         f"{getattr(args, name)}")
    from d2lmini.i18n import languages
    if args.language is not None and args.language not in languages():
        parser.error(f"--language must be one of {', '.join(languages())}; received {args.language!r}")
    text = report(args.submissions, args.chapter, args.names, args.language, args.timeout, args.memory_mb, args.jobs)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"Wrote {args.out}")


if __name__ == "__main__":
    main()
