"""`make lab` opens JupyterLab without the "Jupyter news" prompt (etc/jupyterlab)."""

from __future__ import annotations

import shutil

from tests.browser.lab import ROOT, SCREENSHOTS, running_lab

NEWS = "official Jupyter news"


def news_prompt_shown(browser, root, settings) -> bool:
    with running_lab(root, settings) as lab:
        page = browser.new_page()
        try:
            page.goto(f"{lab.base}/lab?token={lab.token}")
            page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started")
            page.wait_for_timeout(4000)  # the prompt shows shortly after start-up
            SCREENSHOTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(SCREENSHOTS / f"lab-{settings.name}.png"))
            return NEWS in (page.locator("body").text_content() or "")
        finally:
            page.close()


def test_make_lab_settings_turn_the_news_prompt_off(browser, tmp_path):
    ours = tmp_path / "make-lab"  # a copy: Lab may write to its settings folder
    shutil.copytree(ROOT / "etc" / "jupyterlab" / "user-settings", ours)
    (tmp_path / "a").mkdir()
    assert not news_prompt_shown(browser, tmp_path / "a", ours)
    (tmp_path / "b").mkdir()
    assert news_prompt_shown(browser, tmp_path / "b", tmp_path / "defaults")  # the check works
