"""Fixtures for the browser tests: a throwaway JupyterLab server and headless Chromium.

The server runs from a temporary root with its own kernelspec (this interpreter, with this
checkout on ``PYTHONPATH``), settings and workspaces, so nothing from the user's Jupyter setup
leaks in. Every wait is bounded and the server is killed in a ``finally``, so a broken
environment fails or skips the test instead of hanging it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

#: The kernelspec the test notebook asks for; registered only inside the temporary Jupyter path.
KERNEL_NAME = "gradnb-browser-test"

#: Seconds JupyterLab may take to answer its status API.
SERVER_START_TIMEOUT_S = 60

#: JupyterLab settings that keep the page quiet and every cell in the DOM: no news toast, and
#: no windowed (virtualised) notebook that would drop off-screen cells' outputs.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {"fetchNews": "false"},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
}


@dataclass(frozen=True)
class LabServer:
    """A running JupyterLab: its base URL, token, root directory and the test kernel's name."""

    url: str
    token: str
    root: Path
    kernel_name: str = KERNEL_NAME

    def notebook_url(self, name: str) -> str:
        """The URL that opens notebook ``name`` (relative to the root) in the Lab UI."""
        return f"{self.url}/lab/tree/{name}?token={self.token}"


def chromium_executable() -> str:
    """Debian's Chromium binary, or skip: the test cannot download a browser."""
    for name in ("chromium", "chromium-browser"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("no Chromium binary on PATH (Debian: apt-get install chromium)")


def free_port() -> int:
    """A localhost TCP port nothing listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _write_json(path: Path, content: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content, indent=1))


def _prepare_jupyter_dirs(base: Path) -> dict[str, str]:
    """Kernelspec, settings and workspace dirs under ``base``; returns the environment."""
    _write_json(base / "jupyter" / "kernels" / KERNEL_NAME / "kernel.json", {
        # This interpreter, so the kernel sees the same packages as the test.
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "gradnb browser test",
        "language": "python",
        "env": {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                             os.environ.get("PYTHONPATH")]))},
    })
    for name, settings in LAB_SETTINGS.items():
        _write_json(base / "lab-settings" / name, settings)
    return {
        "JUPYTER_PATH": str(base / "jupyter"),
        "JUPYTER_CONFIG_DIR": str(base / "config"),
        "JUPYTER_RUNTIME_DIR": str(base / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(base / "lab-settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(base / "workspaces"),
    }


def _wait_until_up(server: subprocess.Popen, url: str, token: str, log: Path) -> None:
    deadline = time.monotonic() + SERVER_START_TIMEOUT_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            pytest.fail(f"JupyterLab exited with {server.returncode}:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}/api/status?token={token}", timeout=5):
                return
        except (urllib.error.URLError, OSError):
            time.sleep(0.3)
    pytest.fail(f"JupyterLab did not answer within {SERVER_START_TIMEOUT_S} s:\n"
                f"{log.read_text()[-3000:]}")


def _stop(server: subprocess.Popen) -> None:
    """Stop the server: on SIGTERM it shuts its kernels down (and a kernel whose parent dies
    exits by itself); SIGKILL the server's process group if it does not stop in time."""
    if server.poll() is not None:
        return
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(timeout=10)


@pytest.fixture
def lab_server(tmp_path: Path) -> Iterator[LabServer]:
    """Start JupyterLab on a free localhost port with a random token; kill it afterwards."""
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupyterlab_widgets")
    pytest.importorskip("ipykernel")
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    env = {**os.environ, **_prepare_jupyter_dirs(tmp_path)}
    port, token = free_port(), os.urandom(16).hex()
    log = tmp_path / "jupyterlab.log"
    command = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1", f"--port={port}",
        "--ServerApp.port_retries=0", f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={notebooks}", "--LabApp.expose_app_in_browser=True",
    ]
    if os.geteuid() == 0:  # CI containers run as root; Jupyter refuses that unless told
        command.append("--allow-root")
    with log.open("w") as sink:
        server = subprocess.Popen(command, env=env, cwd=notebooks, stdout=sink,
                                  stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        _wait_until_up(server, url, token, log)
        yield LabServer(url, token, notebooks)
    finally:
        _stop(server)


@pytest.fixture
def browser_page():
    """A Playwright page in headless Chromium (skips when either is missing)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    executable = chromium_executable()
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable, headless=True, timeout=60_000,
            # Root in a container cannot use Chromium's sandbox; the page is our own localhost.
            args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(30_000)
            yield page
        finally:
            browser.close()
