"""The curriculum in JupyterLab as `make lab` opens it: a notebook opens unmodified, and
running cells never writes into the tracked file by itself (autosave is off).

Every notebook carries the same metadata (`scripts/check_notebooks.py` holds it, and
`tests/notebooks/test_static.py` checks each file), so one notebook shows it is what Lab
writes; a copy with the metadata the notebooks had before shows the check can fail.
"""

from __future__ import annotations

import json
import shutil

from tests.browser.lab import ROOT, SCREENSHOTS, Notebook, running_lab

OLD = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"}}

_DIRTY = "() => window.jupyterapp.shell.currentWidget.context.model.dirty"
_SHUTDOWN = "async () => { await window.jupyterapp.shell.currentWidget.sessionContext.shutdown(); }"
_AUTOSAVE = """async () => {
  const s = await window.jupyterapp.serviceManager.settings.fetch(
    '@jupyterlab/docmanager-extension:plugin');
  return s.settings.autosave;
}"""


def test_a_notebook_opens_unmodified_and_autosave_is_off(browser, tmp_path):
    settings = tmp_path / "make-lab"  # a copy: Lab may write to its settings folder
    shutil.copytree(ROOT / "etc" / "jupyterlab" / "user-settings", settings)
    root = tmp_path / "notebooks"
    root.mkdir()
    source = ROOT / "notebooks" / "00_quickstart.ipynb"
    shutil.copy(source, root / "00_quickstart.ipynb")
    old = json.loads(source.read_text(encoding="utf-8"))
    old["metadata"] = OLD
    (root / "old_metadata.ipynb").write_text(json.dumps(old, ensure_ascii=False, indent=1))
    dirty = {}
    with running_lab(root, settings) as lab:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        try:
            for name in ("00_quickstart.ipynb", "old_metadata.ipynb"):
                Notebook(page, lab, name)  # waits for its kernel to be idle
                page.wait_for_timeout(1000)  # Lab writes kernel metadata once the kernel is up
                dirty[name] = page.evaluate(_DIRTY)
                if name == "00_quickstart.ipynb":
                    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
                    page.screenshot(path=str(SCREENSHOTS / "curriculum-00-opened.png"))
                page.evaluate(_SHUTDOWN)
            autosave = page.evaluate(_AUTOSAVE)
        finally:
            page.close()
    assert dirty == {"00_quickstart.ipynb": False, "old_metadata.ipynb": True}
    assert autosave is False
    assert (root / "00_quickstart.ipynb").read_bytes() == source.read_bytes()  # nothing written
