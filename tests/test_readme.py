"""The README's Python examples run as written."""

import re
from pathlib import Path

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


def test_readme_has_examples():
    assert len(BLOCKS) >= 2


def test_readme_examples_run(capsys):
    for block in BLOCKS:
        exec(compile(block, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "final_answer" in out and "MU5101" in out


def test_the_conversation_example_prints_what_its_comment_says(capsys):
    """Issue 38: the README's conversation example, its printed turns as the comment shows."""
    block = next(b for b in BLOCKS if "an.User(" in b)
    said = re.findall(r"^# (.*)$", block, re.M)
    assert len(said) == 2, "the example shows what each print prints in a comment"
    exec(compile(block, "README.md", "exec"), {})
    assert capsys.readouterr().out.splitlines() == said
