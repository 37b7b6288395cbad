"""The web site in Lighthouse's mobile test, each chapter page served gzipped from 127.0.0.1.

    python -m benchmarks.site_lighthouse --out benchmarks/site_lighthouse.json   # make bench-site
    python -m benchmarks.site_lighthouse --pages 02_masked_softmax --out /tmp/one.json

It serves a built site (`make site`: build/site) from a small HTTP server on
127.0.0.1 that compresses text (HTML, CSS, JavaScript, JSON, SVG) with gzip,
as GitHub Pages or a CDN does; Python's http.server sends every file as it
is. Then, for each chapter page, it runs Lighthouse (npm, installed by
`make bench-site` into .venv/lighthouse) once, with its default settings: a
mobile phone's screen, a slow phone's CPU and a slow 4G network, both
simulated from one unthrottled load. Headless Chromium is /usr/bin/chromium
(CHROME_PATH).

Per page it records the performance and accessibility scores, the largest
contentful paint, the bytes transferred, the time render-blocking resources
cost and the accessibility audits that failed, with the machine's load
average and Lighthouse's benchmark index (its own measure of the CPU's
speed), since both move the scores. Prints a Markdown table and writes JSON
(--out) with the date and the machine.
"""

import argparse
import gzip
import json
import mimetypes
import os
import platform
import subprocess
import sys
import tempfile
import threading
import time
from datetime import date
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from tools.learner_repo import chapter_sources

REPO = Path(__file__).resolve().parents[1]

LIGHTHOUSE = REPO / ".venv" / "lighthouse" / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = Path("/usr/bin/chromium")
COMPRESSED_TYPES = ("text/", "application/javascript", "application/json", "image/svg+xml")
RUN_TIMEOUT = 300  # seconds for one page's Lighthouse run


class GzipHandler(SimpleHTTPRequestHandler):
    """Serve files from the site's folder, text gzipped when the client accepts it."""

    compressed = {}  # path -> gzip bytes, made once per file
    lock = threading.Lock()

    def send_head(self):
        path = Path(self.translate_path(self.path))
        if path.is_dir():
            path = path / "index.html"
        kind = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
        accepts = "gzip" in self.headers.get("Accept-Encoding", "")
        if not (path.is_file() and accepts and kind.startswith(COMPRESSED_TYPES)):
            return super().send_head()
        with self.lock:
            if path not in self.compressed:
                self.compressed[path] = gzip.compress(path.read_bytes(), compresslevel=6)
        body = self.compressed[path]
        self.send_response(200)
        self.send_header("Content-Type", kind + ("; charset=utf-8" if kind.startswith("text/") else ""))
        self.send_header("Content-Encoding", "gzip")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Vary", "Accept-Encoding")
        self.send_header("Cache-Control", "max-age=600")  # GitHub Pages' setting
        self.end_headers()
        return _Bytes(body)

    def log_message(self, *args):
        pass


class _Bytes:
    """What send_head returns: something copyfile can read and close."""

    def __init__(self, data):
        self.data, self.done = data, False

    def read(self, size=-1):
        if self.done:
            return b""
        self.done = True
        return self.data

    def close(self):
        pass


def serve(folder):
    server = ThreadingHTTPServer(("127.0.0.1", 0), partial(GzipHandler, directory=str(folder)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def run_lighthouse(url, lighthouse, chrome):
    """Lighthouse's report (its JSON) for ``url``, with its default (mobile) settings."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder) / "report.json"
        command = [str(lighthouse), url, "--output=json", f"--output-path={report}", "--quiet",
                   "--only-categories=performance,accessibility",
                   "--chrome-flags=--headless=new --no-sandbox --disable-gpu"]
        done = subprocess.run(command, capture_output=True, text=True, timeout=RUN_TIMEOUT,
                              env={**os.environ, "CHROME_PATH": str(chrome)})
        if done.returncode != 0 or not report.exists():
            raise RuntimeError(f"Lighthouse failed on {url} (exit {done.returncode}):\n{done.stderr[-3000:]}")
        return json.loads(report.read_text())


def figures(report):
    """The figures kept per page from a Lighthouse report."""
    audits, categories = report["audits"], report["categories"]
    failed = [ref["id"] for ref in categories["accessibility"]["auditRefs"]
              if ref["weight"] > 0 and audits[ref["id"]]["score"] is not None and audits[ref["id"]]["score"] < 1]
    return {
        "performance": round(categories["performance"]["score"] * 100),
        "accessibility": round(categories["accessibility"]["score"] * 100),
        "lcp_ms": round(audits["largest-contentful-paint"]["numericValue"]),
        "fcp_ms": round(audits["first-contentful-paint"]["numericValue"]),
        "total_bytes": round(audits["total-byte-weight"]["numericValue"]),
        "render_blocking_ms": round(audits["render-blocking-resources"].get("numericValue") or 0),
        "accessibility_failed": failed,
        "benchmark_index": report["environment"]["benchmarkIndex"],
    }


def cpu_name():
    try:
        lines = Path("/proc/cpuinfo").read_text().splitlines()
    except OSError:
        return platform.processor() or platform.machine()
    return next((line.split(":", 1)[1].strip() for line in lines if line.startswith("model name")), platform.machine())


def git_commit():
    """The checkout's commit, marked "+changes" when files differ from it (the site may hold them)."""
    def git(*arguments):
        return subprocess.run(["git", *arguments], cwd=REPO, capture_output=True, text=True).stdout.strip()

    changed = git("status", "--porcelain", "--untracked-files=no")
    return git("rev-parse", "--short", "HEAD") + ("+changes" if changed else "")


def check_arguments(parser, args):
    chapters = [path.stem for path in chapter_sources()]
    if not (args.site / "index.html").is_file():
        parser.error(f"--site must be a built site (run `make site`); got {args.site}, which has no index.html")
    unknown = [page for page in args.pages if page not in chapters]
    if unknown:
        parser.error(f"--pages must name chapter pages, such as {chapters[0]}; got {unknown}; chapters: {chapters}")
    for what, path, hint in (("--lighthouse", args.lighthouse, "run `make bench-site`, which installs it from npm"),
                             ("--chrome", args.chrome, "install Debian's chromium")):
        if not os.access(path, os.X_OK):
            parser.error(f"{what} must be an executable; got {path}, which is missing: {hint}")
    return args.pages or chapters


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--site", type=Path, default=REPO / "build" / "site",
                        help="the built site (default build/site)")
    parser.add_argument("--out", type=Path, required=True,
                        help="the JSON file to write, e.g. benchmarks/site_lighthouse.json")
    parser.add_argument("--pages", nargs="*", default=[], help="chapter pages by name (default: every chapter)")
    parser.add_argument("--lighthouse", type=Path, default=LIGHTHOUSE,
                        help="the Lighthouse command (default: npm's, in .venv/lighthouse)")
    parser.add_argument("--chrome", type=Path, default=CHROMIUM,
                        help="the Chromium that Lighthouse drives (default /usr/bin/chromium)")
    args = parser.parse_args(argv)
    pages = check_arguments(parser, args)

    server = serve(args.site)
    base = f"http://127.0.0.1:{server.server_address[1]}"
    rows, versions = [], {}
    try:
        for page in pages:
            started = time.perf_counter()
            report = run_lighthouse(f"{base}/{page}.html", args.lighthouse, args.chrome)
            versions = {"lighthouse": report["lighthouseVersion"], "chromium": report["environment"]["hostUserAgent"]}
            rows.append({"page": page, **figures(report), "load_average": round(os.getloadavg()[0], 2),
                         "seconds": round(time.perf_counter() - started, 1)})
            print(f"{page}: performance {rows[-1]['performance']}, accessibility {rows[-1]['accessibility']}",
                  file=sys.stderr)
    finally:
        server.shutdown()

    record = {
        "date": date.today().isoformat(),
        "commit": git_commit(),
        "machine": {"cpu": cpu_name(), "cpus": os.cpu_count(), "system": platform.platform()},
        **versions,
        "settings": "Lighthouse defaults: mobile screen, simulated slow 4G and 4x slower CPU; one run per page; "
                    "served gzipped from 127.0.0.1",
        "pages": rows,
    }
    args.out.write_text(json.dumps(record, indent=1) + "\n")
    print(f"{record['date']}, {record['machine']['cpu']} ({record['machine']['cpus']} CPUs), "
          f"Lighthouse {versions.get('lighthouse')}\n")
    print("| page | performance | accessibility | LCP s | KB transferred | render-blocking ms | load average |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for row in rows:
        print(f"| {row['page']} | {row['performance']} | {row['accessibility']} | {row['lcp_ms'] / 1000:.1f} | "
              f"{row['total_bytes'] / 1024:.0f} | {row['render_blocking_ms']} | {row['load_average']} |")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
