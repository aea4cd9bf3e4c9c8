"""A real headless Chromium (Debian's `chromium` and `chromium-driver`, which .ci/run installs), driven
through selenium, to open what Tether writes for people and look at it as they would.

Nothing is installed or downloaded here: the browser and its driver are the distribution's, named by
path, so selenium's own driver manager never runs. Where they are missing the test is skipped, except
under CI, where that is a failure.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
# Screenshots and pages the tests keep for a person to look at (ignored by git).
ARTIFACTS = Path(__file__).parent / "artifacts"


@contextmanager
def chromium(width: int = 1400, height: int = 1000) -> Iterator[WebDriver]:
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if missing:
        message = f"{', '.join(missing)} missing: apt-get install -y chromium chromium-driver"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def keep_screenshot(driver: WebDriver, name: str) -> Path:
    """The whole page, beyond the window too, as a PNG under tests/artifacts/; its path is printed
    (pytest shows it with -s, or on a failure)."""
    ARTIFACTS.mkdir(exist_ok=True)
    width, height = driver.execute_script(
        "const page = document.documentElement; return [page.scrollWidth, page.scrollHeight]")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {  # type: ignore[attr-defined]
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
    path = ARTIFACTS / f"{name}.png"
    path.write_bytes(base64.b64decode(shot["data"]))
    print(f"screenshot kept: {path}")
    return path
