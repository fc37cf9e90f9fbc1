"""`stratagem run` with the embedded model for real: llama.cpp on the shipped Gemma 3 270M GGUF,
offline on the CPU, a few seconds."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from stratagem.cli import main
from stratagem.experiments.config import load_config
from stratagem.experiments.grid import expand
from stratagem.experiments.runner import STORE_FILE
from stratagem.experiments.store import ResultStore

ROUNDS = 3


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    try:
        main(list(argv))
        code = 0
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().out


def test_embedded_model_plays_valid_rounds_and_replays_for_free(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "tiny.yaml"
    config = {
        "name": "tiny",
        "output": str(tmp_path / "out"),
        "models": [{"model": "local/gemma-3-270m", "max_concurrency": 1}],
        "agents": [{"name": "plain", "framing": "prisoner", "output": "choice"}],
        "games": ["dilemma"],
        "opponents": ["TitForTat"],
        "rounds": [ROUNDS],
        "concurrency": 1,
    }
    file.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    (spec,) = expand(load_config(file))
    db = tmp_path / "out" / STORE_FILE

    code, out = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0, out
    assert f"1 played, 0 failed; {ROUNDS} model calls (0 cached, 0 failed)" in out
    with ResultStore(db) as store:
        rounds = store.rounds(spec.id)
        assert [r.round for r in rounds] == list(range(1, ROUNDS + 1))
        assert all(r.valid for r in rounds)  # the grammar allows nothing but a label
        assert all(a in ("cooperate", "defect") for r in rounds for a in r.actions)
        assert store.events(spec.id, "invalid") == []
        calls = store.llm_calls(spec.id)
        assert len(calls) == ROUNDS
        for call, played in zip(calls, rounds, strict=True):
            assert not call.cached and call.error is None and call.model == "local/gemma-3-270m"
            assert (call.text or "").casefold() == played.actions[0]  # shown as "Cooperate"
            words = sum(len(m["content"].split()) for m in call.request["messages"])
            # Real tokenizer counts: the sub-word prompt is longer than its word count; the label
            # takes at least one token.
            assert call.input_tokens is not None and call.input_tokens > words
            assert call.output_tokens is not None and 1 <= call.output_tokens <= 8
            assert played.tokens == (call.input_tokens + call.output_tokens, 0)
        # Each round's prompt repeats the history, so it grows.
        lengths = [c.input_tokens or 0 for c in calls]
        assert lengths == sorted(lengths) and lengths[0] < lengths[-1]
        played_rounds = [(r.actions, r.payoffs) for r in rounds]

    # Again: the episode is finished, nothing is asked of the model.
    code, out = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0 and "1 already finished, 0 played, 0 failed; 0 model calls" in out

    # Without the store (as if killed before any round was written): every answer replays
    # from the response cache, and the game comes out the same.
    for path in db.parent.glob(f"{STORE_FILE}*"):
        path.unlink()
    code, out = cli(capsys, "run", str(file), "--no-progress")
    assert code == 0 and f"{ROUNDS} model calls ({ROUNDS} cached, 0 failed)" in out
    with ResultStore(db) as store:
        assert [(r.actions, r.payoffs) for r in store.rounds(spec.id)] == played_rounds
        assert all(c.cached and c.cost_usd == 0 for c in store.llm_calls())
