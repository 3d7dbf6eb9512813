"""Take docs/img/copilot-chat.png: the demo (run.py) mid-conversation, in Chromium.

    bash scripts/setup-browser          # Debian's chromium + playwright in .venv
    .venv/bin/python examples/copilot_chat/screenshot.py [--out PATH]

Plays the page's three examples (a supported answer from a document, a JSON tool
result with a wrong total, a wrong year rewritten) and shows the redacted total's
explanation as a person hovering over it sees it.
"""

from __future__ import annotations

import argparse
import importlib.util
from pathlib import Path

HERE = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("copilot_chat_run", HERE / "run.py")
run = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(run)

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=run.ROOT / "docs" / "img" / "copilot-chat.png")
    args = parser.parse_args()
    with run.demo(run.free_port(), delay=0.02) as url, sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
        page = browser.new_page(viewport={"width": 1360, "height": 900}, device_scale_factor=1)
        page.goto(url)
        page.wait_for_selector(".example")
        for i in range(3):
            page.locator(".example").nth(i).click()
            page.click("#send")
            page.locator(".turn.assistant").nth(i).locator(".report").wait_for(timeout=120_000)
        page.evaluate("document.getElementById('transcript').scrollTop = 1e6")
        page.locator(".turn.assistant").nth(1).locator(".s-redact").first.hover()
        page.wait_for_timeout(300)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(args.out))
        browser.close()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
