"""Browser tests: the real server (uvicorn on a free port) driven by Debian's Chromium through Playwright.

These tests never skip: a missing /usr/bin/chromium or Playwright is a failure with the fix in the message
(`.ci/run` installs Chromium when it is missing). Every page is offline: any request that is not to the
server under test is aborted and fails the test.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.sockets import listening_socket, port_of

CHROMIUM = os.environ.get("CLIPBRIDGE_CHROMIUM", "/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[2]
OUTPUT = ROOT / "test-output" / "browser"


def start_server(extra_env: dict[str, str] | None = None) -> tuple[subprocess.Popen, str]:
    """uvicorn serving clipbridge.main:app on a port the kernel chose; returns (process, base URL) once /healthz answers."""
    sock = listening_socket()
    port = port_of(sock)
    env = {k: v for k, v in os.environ.items() if k != "CLIPBRIDGE_API_KEY"}
    env.update(extra_env or {})
    proc = subprocess.Popen([sys.executable, "-m", "uvicorn", "clipbridge.main:app", "--fd", str(sock.fileno()),
                             "--log-level", "warning"],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            pass_fds=(sock.fileno(),))
    sock.close()
    base = f"http://127.0.0.1:{port}"
    deadline = time.time() + 30
    while time.time() < deadline:
        try:
            urllib.request.urlopen(base + "/healthz", timeout=1)
            return proc, base
        except OSError:
            if proc.poll() is not None:
                pytest.fail(f"server exited: {proc.stdout.read().decode()[-2000:]}")
            time.sleep(0.2)
    proc.kill()
    pytest.fail("server did not start in 30 s")


def stop_server(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="session")
def server() -> Iterator[str]:
    proc, base = start_server()
    yield base
    stop_server(proc)


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).is_file():
        pytest.fail(f"{CHROMIUM} is missing: the browser tests need Debian's Chromium "
                    "(`apt-get install chromium`; .ci/run installs it). They are never skipped.")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright for Python is missing: pip install -e '.[dev]'")
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    return OUTPUT


class PageProblems:
    """What a page did that it must not: requests off the server (offline), script errors, CSP violations."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.external: list[str] = []
        self.errors: list[str] = []

    def route(self, route) -> None:
        url = route.request.url
        if url.startswith(self.base + "/") or url.startswith(("blob:", "data:")):
            route.continue_()
        else:
            self.external.append(url)
            route.abort()

    def console(self, msg) -> None:
        # A 4xx answer from the API is logged by Chromium as "Failed to load resource"; the page handles those.
        if msg.type == "error" and "Failed to load resource" not in msg.text:
            self.errors.append(msg.text)


def open_page(browser, base: str):
    """A fresh context (own sessionStorage) and page with the offline and error checks attached."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1440, "height": 900})
    problems = PageProblems(base)
    context.route("**/*", problems.route)
    page = context.new_page()
    page.on("console", problems.console)
    page.on("pageerror", lambda exc: problems.errors.append(f"uncaught: {exc}"))
    page.set_default_timeout(15000)
    return context, page, problems


@pytest.fixture
def page(browser, server):
    context, page, problems = open_page(browser, server)
    yield page
    context.close()
    assert not problems.external, f"the page reached outside the service (must work offline): {problems.external}"
    assert not problems.errors, f"console errors (CSP violations, script errors): {problems.errors}"


@pytest.fixture
def new_page(browser):
    """Open more pages (each in its own context, e.g. to follow a permalink fresh); checked like `page`."""
    opened = []

    def make(base: str):
        context, page, problems = open_page(browser, base)
        opened.append((context, problems))
        return page

    yield make
    for context, problems in opened:
        context.close()
        assert not problems.external, f"the page reached outside the service: {problems.external}"
        assert not problems.errors, f"console errors: {problems.errors}"


@pytest.fixture(scope="session")
def keyed_server() -> Iterator[tuple[str, str]]:
    """A second server with CLIPBRIDGE_API_KEY set: (base URL, key)."""
    key = "inspector-test-key"
    proc, base = start_server({"CLIPBRIDGE_API_KEY": key})
    yield base, key
    stop_server(proc)


@pytest.fixture
def screenshot(output_dir):
    """screenshot(page, name): a full-page PNG under test-output/browser/. With docs=True it also becomes
    docs/inspector.png (the README's), with docs="NAME.png" docs/NAME.png, when that is missing or
    CLIPBRIDGE_UPDATE_SCREENSHOT=1 is set, so an ordinary test run does not dirty the checkout."""

    def take(page, name: str, docs: bool | str = False) -> Path:
        shot = output_dir / f"{name}.png"
        page.screenshot(path=str(shot), full_page=True)
        target = ROOT / "docs" / (docs if isinstance(docs, str) else "inspector.png")
        if docs and (os.environ.get("CLIPBRIDGE_UPDATE_SCREENSHOT") == "1" or not target.exists()):
            target.parent.mkdir(exist_ok=True)
            shutil.copyfile(shot, target)
        return shot

    return take
