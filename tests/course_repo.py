"""A course repository in a temporary folder, and a learner's pull of it with nbgitpuller's own GitPuller."""

from nbgitpuller.pull import GitPuller

from tools.learner_repo import git


def new_course(tmp_path, files):
    course = tmp_path / "course"
    course.mkdir()
    git(course, "init", "--quiet", "--initial-branch", "learner")
    return commit(course, files)


def commit(course, files):
    for name, text in files.items():
        (course / name).parent.mkdir(parents=True, exist_ok=True)
        (course / name).write_text(text)
    git(course, "add", "--all")
    git(course, "commit", "--quiet", "-m", "update")
    return course


def pull(course, clone):
    return "".join(GitPuller(str(course), str(clone), branch="learner", depth=1).pull())
