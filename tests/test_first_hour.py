"""Issue 21, item 9: the small untruths a new user trips on, each as they would type it."""

from __future__ import annotations

import pytest

from agentspool.cli.main import main


@pytest.mark.parametrize(
    "word,said",
    [
        ("lss", "did you mean: agentspool ls?"),
        ("wach", "did you mean: agentspool watch?"),
        ("claude", "claude-code is a provider: did you mean agentspool install claude-code"),
        ("codex", "codex is a provider"),
    ],
)
def test_a_mistyped_command_gets_a_did_you_mean(word, said, capsys) -> None:
    with pytest.raises(SystemExit) as exited:
        main([word])
    assert exited.value.code == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_search_takes_words_after_double_dash(capsys) -> None:
    assert main(["search", "--no-index", "--", "-color"]) == 0
    assert "no record holds '-color'" in capsys.readouterr().err
    assert main(["search", "--no-index", "--", "color"]) == 0
    assert "no record holds 'color'" in capsys.readouterr().err
    assert main(["search", "--no-index"]) == 2  # still: at least one word


def test_a_reversed_span_is_flagged(capsys) -> None:
    assert main(["usage", "--no-index", "--since", "2026-12-01", "--until", "2026-11-01"]) == 2
    err = capsys.readouterr().err
    assert err == "agentspool: --since 2026-12-01 is after --until 2026-11-01: nothing between\n"
