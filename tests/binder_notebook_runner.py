"""Execute notebooks in this interpreter's environment; report each kernel's peak memory.

tests/test_binder.py runs this file with the Python of a fresh virtual
environment built from binder/requirements.txt, so that nbclient, the kernel
and every package the notebooks import come from that environment alone:

    python binder_notebook_runner.py NOTEBOOK.ipynb ...

The notebooks are the learner edition that binder/postBuild builds, the ones
a Binder user opens: exercises are stubs, so their check cells raise. Every
cell runs, errors allowed. For each notebook it prints one JSON line: the
notebook's name, the kernel's command line, the seconds it took, the kernel's
peak resident memory in MiB (VmHWM in /proc, so Linux only), and the errors
of each code cell that raised: its index, its tags, and for each error its
name, its message and how many lines its traceback shows.
"""

import json
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def peak_rss_mib(pid):
    """The highest resident memory the process has had so far, in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # the kernel reports kB
    raise RuntimeError(f"/proc/{pid}/status has no VmHWM line")


def kernel_command(pid):
    return Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")[:-1]


def run(path):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook,
        kernel_name="python3",
        timeout=120,
        allow_errors=True,
        resources={"metadata": {"path": str(path.parent)}},
    )
    report = {"notebook": path.name}

    def after_each_cell(**_):
        # VmHWM never decreases, so the reading after the last cell is the peak.
        pid = client.km.provisioner.pid
        report["kernel"] = kernel_command(pid)
        report["peak_rss_mib"] = round(peak_rss_mib(pid), 1)

    client.on_cell_executed = after_each_cell
    start = time.perf_counter()
    client.execute()
    report["seconds"] = round(time.perf_counter() - start, 2)
    report["errors"] = [
        {"cell": index, "tags": cell.metadata.get("tags", []),
         "errors": [[out.ename, out.evalue, len(out.traceback)] for out in cell.outputs if out.output_type == "error"]}
        for index, cell in enumerate(notebook.cells)
        if cell.cell_type == "code" and any(out.output_type == "error" for out in cell.outputs)
    ]
    return report


if __name__ == "__main__":
    for name in sys.argv[1:]:
        print(json.dumps(run(Path(name).resolve())), flush=True)
