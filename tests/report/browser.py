"""A report opened in headless Chromium, as a person would open it (issue 26): the first
screen as a PNG, and the laid-out page's widths and images read back from its DOM."""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

# Written into a copy of the page: after layout, the body carries the page's scroll and
# client widths, the number of images that did not decode, the content width (the
# title's), the images shown narrower than min(their own width, the content width), and
# the table captions narrower than the content (Chromium dumps the DOM).
_PROBE = (
    "<script>window.addEventListener('load',()=>{const d=document.documentElement;"
    "const imgs=[...document.images];"
    "const broken=imgs.filter(i=>!(i.complete&&i.naturalWidth>0)).length;"
    "const c=Math.round(document.querySelector('h1').getBoundingClientRect().width);"
    "const shrunk=imgs.filter(i=>i.getBoundingClientRect().width<"
    "Math.min(i.naturalWidth,c)-1).length;"
    "const narrow=[...document.querySelectorAll('.cap')].filter(p=>"
    "p.getBoundingClientRect().width<c-1).length;"
    "document.body.setAttribute('data-layout',[d.scrollWidth,d.clientWidth,imgs.length,"
    "broken,c,shrunk,narrow].join('x'))})"
    "</script></body>"
)


@dataclass(frozen=True)
class Layout:
    """The page at 1280 px: its scroll and client widths, images, undecoded images, the
    content width, images shown scaled below min(their width, the content width), and
    table captions narrower than the content."""

    scroll_width: int
    client_width: int
    images: int
    broken_images: int
    content_width: int
    shrunk_images: int
    narrow_captions: int


def _browser() -> str:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
    if browser is None:
        pytest.skip("chromium is not installed (.ci/run installs it with apt when it can); "
                    "the HTML structure is checked by html.parser tests")  # fmt: skip
    return browser


def _base(profile: Path) -> list[str]:
    return [_browser(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
            "--no-first-run", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", f"--user-data-dir={profile}", "--window-size=1280,900"]  # fmt: skip


def first_screen(report: Path, work: Path) -> bytes:
    """The PNG Chromium takes of the report's first 1280 x 900 screen."""
    png = work / "first_screen.png"
    cmd = [*_base(work / "profile"), f"--screenshot={png}", report.resolve().as_uri()]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return png.read_bytes()


def layout(report: Path, work: Path) -> Layout:
    """The report laid out at 1280 px (a copy of it, beside the original so that its
    relative figure paths resolve)."""
    probe = report.with_name(f".{report.stem}.layout.html")
    probe.write_text(
        report.read_text(encoding="utf-8").replace("</body>", _PROBE), encoding="utf-8"
    )
    try:
        cmd = [*_base(work / "profile"), "--virtual-time-budget=5000", "--dump-dom",
               probe.resolve().as_uri()]  # fmt: skip
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=180, check=False)
    finally:
        probe.unlink()
    got = re.search(r'data-layout="(\d+(?:x\d+){6})"', proc.stdout)
    assert got is not None, proc.stderr[-2000:]
    return Layout(*(int(g) for g in got.group(1).split("x")))
