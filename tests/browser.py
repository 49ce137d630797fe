"""Headless Chromium for the tests, driven over the DevTools protocol on a pipe (no network, no port).

``Chromium`` starts Debian's ``chromium`` with ``--remote-debugging-pipe`` (the protocol on file
descriptors 3 and 4, NUL-separated JSON) and opens one page. Every request the page makes is
recorded (``requests``) and the network is emulated offline, so a test can assert that a page
loads nothing but files. Host names resolve nowhere either (``--host-resolver-rules``).
"""

from __future__ import annotations

import base64
import io
import json
import os
import queue
import shutil
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--mute-audio",
    "--autoplay-policy=no-user-gesture-required",
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--window-size=1280,720",
]


class Chromium:
    """One headless Chromium with one page; ``close()`` (or ``with``) ends the process it started."""

    def __init__(self, user_data_dir: Path, *extra_flags: str) -> None:
        if CHROMIUM is None:
            raise RuntimeError("chromium is not installed (make setup installs Debian's chromium)")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        command = [CHROMIUM, *FLAGS, *extra_flags, f"--user-data-dir={user_data_dir}", "--remote-debugging-pipe"]
        # the protocol runs on the child's descriptors 3 (commands in) and 4 (answers out)
        shell = 'exec "$0" "$@" 3<&0 4>&1 0</dev/null 1>/dev/null'
        self.process = subprocess.Popen(
            ["sh", "-c", shell, *command], stdin=to_browser_r, stdout=from_browser_w, stderr=subprocess.DEVNULL
        )
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._next_id = 0
        self._answers: dict[int, queue.Queue[dict[str, Any]]] = {}
        self.events: queue.Queue[dict[str, Any]] = queue.Queue()
        self.requests: list[str] = []
        self.console: list[str] = []
        self._lock = threading.Lock()
        threading.Thread(target=self._read, daemon=True).start()
        target = self.send("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.send("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
        for domain in ("Page", "Network", "Runtime"):
            self.call(f"{domain}.enable")
        offline = {"offline": True, "latency": 0, "downloadThroughput": -1, "uploadThroughput": -1}
        self.call("Network.emulateNetworkConditions", **offline)

    def _read(self) -> None:
        buffer = b""
        while True:
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                return
            buffer += chunk
            while b"\0" in buffer:
                raw, buffer = buffer.split(b"\0", 1)
                message = json.loads(raw)
                if "id" in message and message["id"] in self._answers:
                    self._answers[message["id"]].put(message)
                else:
                    self._event(message)

    def _event(self, message: dict[str, Any]) -> None:
        method, params = message.get("method"), message.get("params", {})
        if method == "Network.requestWillBeSent":
            self.requests.append(params["request"]["url"])
        elif method == "Runtime.consoleAPICalled":
            self.console.append(" ".join(str(arg.get("value", "")) for arg in params.get("args", [])))
        self.events.put(message)

    def send(self, method: str, session: str | None = None, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """One protocol command; its result (raises on an error answer)."""
        with self._lock:
            self._next_id += 1
            number = self._next_id
            self._answers[number] = queue.Queue()
        message: dict[str, Any] = {"id": number, "method": method, "params": params}
        if session:
            message["sessionId"] = session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        answer = self._answers[number].get(timeout=timeout)
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        result: dict[str, Any] = answer.get("result", {})
        return result

    def call(self, method: str, timeout: float = 60, **params: Any) -> dict[str, Any]:
        """A command to the page."""
        return self.send(method, self.session, timeout, **params)

    def open(self, url: str, timeout: float = 60) -> None:
        """Navigate and wait for the page's load event."""
        while not self.events.empty():
            self.events.get_nowait()
        self.call("Page.navigate", url=url)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                event = self.events.get(timeout=1)
            except queue.Empty:
                continue
            if event.get("method") == "Page.loadEventFired":
                return
        raise TimeoutError(f"{url} did not load in {timeout} s")

    def evaluate(self, expression: str, timeout: float = 60) -> Any:
        """The value of a JavaScript expression (awaited if it is a promise)."""
        result = self.call(
            "Runtime.evaluate", timeout=timeout, expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression[:60]}...: {result['exceptionDetails']}")
        return result["result"].get("value")

    def screenshot(self) -> np.ndarray:
        """The page as an RGB array."""
        from PIL import Image

        data = base64.b64decode(self.call("Page.captureScreenshot", format="png")["data"])
        return np.asarray(Image.open(io.BytesIO(data)).convert("RGB"))

    def press(self, key: str, code: int) -> None:
        """A key press (down and up), as a keyboard sends it."""
        for kind in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code)

    def close(self) -> None:
        try:
            self.send("Browser.close", timeout=10)
        except (RuntimeError, queue.Empty, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()  # only the browser this object started
            self.process.wait()
        for fd in (self._to_browser, self._from_browser):
            try:
                os.close(fd)
            except OSError:
                pass

    def __enter__(self) -> Chromium:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def blank(picture: np.ndarray) -> bool:
    """Whether a screenshot shows (almost) one colour only."""
    colours = np.unique(picture.reshape(-1, 3)[::7], axis=0)
    return len(colours) < 8 or float(picture.std()) < 3
