#!/usr/bin/env python3
"""The conformance page (`sharedos-conformance report --html`) in a real
headless Chromium, driven over W3C WebDriver with the standard library only.

    page-browser-test.py PAGE.html MANIFEST.json SCREENSHOT.png

Starts chromedriver on a free port, opens PAGE.html from its file:// URL and
checks, against the manifest the page was built from:

- a cell opens the drill-down (timed from navigation: the bench figure);
- the page fetched nothing;
- the heatmap has one square per family and column;
- a square's click leaves exactly that family's cells of that column;
- a cell's click (a failing, repeated or otherwise telling one) opens the
  drill-down panel with that cell's key, status and detail, and a repeated
  cell's runs;

then writes a screenshot. The session is deleted and chromedriver and the
browser it started are stopped in every case. Exits 1 on a failed check.
"""

import base64
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# The key a W3C WebDriver element reference is held under.
ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
# Statuses worth a look, most telling first.
TELLING = ["fail", "not_exercised", "out_of_scope"]


class Failed(Exception):
    """A check that did not hold, or a WebDriver call that went wrong."""


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class WebDriver:
    """Just enough of W3C WebDriver over HTTP."""

    def __init__(self, port):
        self.base = f"http://127.0.0.1:{port}"
        self.session = None

    def call(self, method, path, body=None, timeout=60):
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.base + path, data=data, method=method, headers={"Content-Type": "application/json; charset=utf-8"}
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                payload = json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            detail = error.read().decode(errors="replace")
            try:
                value = json.loads(detail)["value"]
                detail = f"{value.get('error')}: {value.get('message', '').splitlines()[0]}"
            except (ValueError, KeyError, IndexError, AttributeError):
                pass
            raise Failed(f"WebDriver {method} {path}: {detail}") from None
        except (urllib.error.URLError, OSError) as error:
            raise Failed(f"WebDriver {method} {path}: {error}") from None
        return payload.get("value")

    def ready(self):
        try:
            return bool(self.call("GET", "/status", timeout=2).get("ready"))
        except Failed:
            return False

    def start(self, user_data_dir):
        args = [
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--window-size=1400,1000",
            f"--user-data-dir={user_data_dir}",
        ]
        options = {"binary": CHROMIUM, "args": args}
        capabilities = {"alwaysMatch": {"browserName": "chrome", "goog:chromeOptions": options}}
        value = self.call("POST", "/session", {"capabilities": capabilities}, timeout=120)
        self.session = value["sessionId"]

    def quit(self):
        if self.session is not None:
            session, self.session = self.session, None
            self.call("DELETE", f"/session/{session}", timeout=30)

    def s(self, method, path, body=None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def find(self, css):
        return self.s("POST", "/element", {"using": "css selector", "value": css})[ELEMENT]

    def find_all(self, css):
        return [e[ELEMENT] for e in self.s("POST", "/elements", {"using": "css selector", "value": css})]

    def click(self, element):
        self.s("POST", f"/element/{element}/click", {})

    def text(self, element):
        return self.s("GET", f"/element/{element}/text")

    def displayed(self, element):
        return self.s("GET", f"/element/{element}/displayed")

    def script(self, source, *args):
        return self.s("POST", "/execute/sync", {"script": source, "args": list(args)})


def check(condition, message):
    if not condition:
        raise Failed(message)


def attribute_selector(name, value):
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'[{name}="{escaped}"]'


def families_of(manifest):
    """Each family's rows as (case, condition), in the manifest's order, as the page groups them."""
    groups = [(g["family"], [(r["caseId"], r["conditionId"]) for r in g["rows"]]) for g in manifest.get("families", [])]
    placed = {row for _, rows in groups for row in rows}
    rest = [(r["caseId"], r["conditionId"]) for r in manifest["rows"] if (r["caseId"], r["conditionId"]) not in placed]
    if rest:
        groups.append(("other", rest))
    return groups


def pick_cell(manifest, groups):
    """A failing or telling cell if there is one, else a repeated one, else a run cell some boundary
    refused, else the first."""
    family_of = {row: family for family, rows in groups for row in rows}
    cells = [
        (row["caseId"], row["conditionId"], cell, family_of[(row["caseId"], row["conditionId"])])
        for row in manifest["rows"]
        for cell in row["cells"]
    ]
    for status in TELLING:
        for found in cells:
            if found[2]["status"] == status:
                return found
    for found in cells:
        if "repeats" in found[2]:
            return found
    for found in cells:
        cell = found[2]
        if cell["turns"] > 0 and cell["refusedBy"] and cell.get("detail"):
            return found
    return cells[0]


def wait_displayed(driver, element, seconds=10):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if driver.displayed(element):
            return
        time.sleep(0.005)
    raise Failed(f"the drill-down panel was not shown within {seconds} s")


def run_checks(driver, page, manifest, screenshot):
    groups = families_of(manifest)
    case, condition, cell, family = pick_cell(manifest, groups)
    column = cell["columnId"]
    key = f"{case}/{condition}/{column}"
    cell_selector = f"button{attribute_selector('data-cell', key)}"

    # The bench figure: navigation until a cell's drill-down is visible.
    started = time.perf_counter()
    driver.s("POST", "/url", {"url": page.resolve().as_uri()})
    loaded = time.perf_counter()
    panel = driver.find("#drilldown")
    driver.click(driver.find(cell_selector))
    wait_displayed(driver, panel)
    visible = time.perf_counter()
    timing = driver.script(
        "const n = performance.getEntriesByType('navigation')[0];"
        "return {dcl: n.domContentLoadedEventEnd, load: n.loadEventEnd,"
        " resources: performance.getEntriesByType('resource').map(r => r.name)};"
    )
    check(not timing["resources"], f"the page fetched {timing['resources']}; it must need nothing outside itself")
    driver.click(driver.find("#dd-close"))
    check(not driver.displayed(panel), "the drill-down's close button left the panel open")

    # The heatmap: one square per family and column.
    columns = [c["id"] for c in manifest["columns"]]
    driver.find("#heatmap table.heatmap")
    squares = driver.find_all("#heatmap [data-square]")
    expected = len(groups) * len(columns)
    check(len(squares) == expected, f"the heatmap has {len(squares)} squares, not {len(groups)} families x {len(columns)} columns")

    # A square's click filters the table to its family and column.
    square = driver.find(f"[data-square]{attribute_selector('data-family', family)}{attribute_selector('data-column', column)}")
    driver.click(square)
    shown = driver.script(
        "return Array.from(document.querySelectorAll('#cells [data-cell]'))"
        ".filter(b => b.offsetParent !== null).map(b => b.getAttribute('data-cell'));"
    )
    rows = dict(groups)[family]
    wanted = [f"{c}/{k}/{column}" for c, k in rows]
    check(sorted(shown) == sorted(wanted), f"after a click on square {family} x {column} the table shows {len(shown)} cells, not its {len(wanted)}")
    check(driver.displayed(driver.find("#filter")), "the filter bar is not shown after a square's click")

    # A cell's click opens its drill-down with its key, status and detail.
    driver.click(driver.find(cell_selector))
    wait_displayed(driver, panel)
    text = " ".join(driver.text(panel).split())
    wanted_text = [("key", key), ("status", cell["status"].replace("_", " ")), ("detail", " ".join(cell.get("detail", "").split()))]
    if "repeats" in cell:
        repeats = cell["repeats"]
        wanted_text.append(("runs", f"{repeats['passes']} of {repeats['runs']} runs passed"))
    for what, needle in wanted_text:
        check(needle in text, f"the drill-down of {key} does not show its {what} {needle!r}; it shows: {text[:400]!r}")

    # The screenshot: header and heatmap, with the filter and the drill-down on.
    driver.script("window.scrollTo(0, 0);")
    png = base64.b64decode(driver.s("GET", "/screenshot"))
    screenshot.parent.mkdir(parents=True, exist_ok=True)
    screenshot.write_bytes(png)

    print(f"page: {page.stat().st_size} bytes, {sum(len(r['cells']) for r in manifest['rows'])} cells")
    print(f"drill-down checked: {key} ({cell['status']})")
    print(f"navigation (WebDriver, until load): {(loaded - started) * 1000:.0f} ms")
    print(f"in the browser: DOMContentLoaded {timing['dcl']:.0f} ms, load {timing['load']:.0f} ms")
    print(f"navigation to drill-down visible: {(visible - started) * 1000:.0f} ms")
    print(f"wrote {screenshot} ({len(png)} bytes)")


def stop(process):
    """Stops chromedriver and whatever it started (its own process group)."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def main(argv):
    if len(argv) != 4:
        print("usage: page-browser-test.py PAGE.html MANIFEST.json SCREENSHOT.png", file=sys.stderr)
        return 2
    page, manifest_path, screenshot = Path(argv[1]), Path(argv[2]), Path(argv[3])
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not os.access(binary, os.X_OK):
            print(f"error: {binary} is missing (apt-get install chromium chromium-driver)", file=sys.stderr)
            return 1
    manifest = json.loads(manifest_path.read_text())
    user_data_dir = tempfile.mkdtemp(prefix="page-browser-test-")
    port = free_port()
    log = open(os.path.join(user_data_dir, "chromedriver.log"), "w+")
    process = subprocess.Popen(
        [CHROMEDRIVER, f"--port={port}"], stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    driver = WebDriver(port)
    try:
        deadline = time.monotonic() + 30
        while not driver.ready():
            if process.poll() is not None or time.monotonic() > deadline:
                log.seek(0)
                raise Failed(f"chromedriver did not start: {log.read()[-2000:]}")
            time.sleep(0.05)
        driver.start(os.path.join(user_data_dir, "profile"))
        run_checks(driver, page, manifest, screenshot)
    except Failed as failure:
        print(f"error: page browser test failed: {failure}", file=sys.stderr)
        return 1
    finally:
        try:
            driver.quit()
        except Failed as failure:
            print(f"warning: {failure}", file=sys.stderr)
        stop(process)
        log.close()
        shutil.rmtree(user_data_dir, ignore_errors=True)
    print("page browser test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
