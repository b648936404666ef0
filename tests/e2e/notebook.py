"""Running one notebook cell in a JupyterLab tab the way a person does, and waiting for what
a person waits for: the editor showing the code, and the kernel answering."""

from __future__ import annotations

import contextlib
import time
from typing import Any

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

ATTEMPT_MS = 15_000


def run_cell(lab: Any, code: str, deadline_ms: int) -> str:
    """Open a new notebook in ``lab``, run ``code`` in its first cell, return what it printed.

    Keys typed before the editor is ready are lost, and a run asked for while the kernel is
    still connecting does nothing (the cell stays without output), so this types until the
    editor shows the code and runs the cell in place until it answers or ``deadline_ms`` ends.
    """
    # JupyterLab reopens what the user had open in earlier sessions; ?reset shows the launcher.
    lab.goto(lab.url.split("?")[0] + "?reset")
    lab.locator('.jp-LauncherCard[data-category="Notebook"]').first.click(timeout=deadline_ms)
    with contextlib.suppress(PlaywrightTimeout):
        lab.get_by_role("button", name="Select", exact=True).click(timeout=5_000)
    cell = lab.locator(".jp-Notebook .jp-CodeCell").first
    editor = cell.locator(".cm-content")
    output = cell.locator(".jp-OutputArea-output").first
    give_up = time.monotonic() + deadline_ms / 1000
    while True:
        editor.click(timeout=deadline_ms)
        if str(editor.inner_text()).strip() != code:
            lab.keyboard.press("ControlOrMeta+A")
            lab.keyboard.press("Delete")
            editor.type(code)
            expect(editor).to_have_text(code, timeout=ATTEMPT_MS)
        lab.keyboard.press("Control+Enter")
        try:
            expect(output).not_to_be_empty(timeout=ATTEMPT_MS)
        except AssertionError:
            if time.monotonic() > give_up:
                raise
            continue
        return str(output.inner_text()).strip()
