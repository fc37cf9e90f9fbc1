"""The MAgIC prompt texts (seed-004 §2, §8): every file loads and fills in, and spot checks against
the spec's verbatim text."""

from __future__ import annotations

import pytest

from stratagem.agents.magic import texts
from stratagem.errors import StratagemError

# seed-004 §8.1, the paper's Prisoner's Dilemma global prompt as the spec shows it.
PD_GLOBAL = (
    "You are playing the Iterative Three-Player Prisoners Dilemma game. Players 1, 2, and 3 are "
    "involved in a crime and are interrogated separately. They can either choose to betray the "
    "others (Defect, D) or cooperate with them (Cooperate, C). The rewards and penalties are "
    "distributed based on the combination of choices made by the three players. The scoring is as "
    "follows: - If all three choose to cooperate, they each get {cooperate} points. - If all three "
    "choose to defect, they each get {defect} point. - If one chooses to defect and the others "
    "choose to cooperate, the betrayer gets {one_defect} points and the collaborators each get 0 "
    "points. - If two choose to defect and the other chooses to cooperate, the betrayers each get "
    "{two_defect} points, and the collaborator gets 0 points. The game is played for 5 rounds, and "
    "the total score is calculated at the end to determine the winner."
)


def dummy_values(name: str) -> dict[str, str]:
    return {key: f"<{key}>" for key in texts.placeholders(name)}


@pytest.mark.parametrize("name", texts.prompt_names())
def test_every_prompt_loads_and_fills_in(name: str) -> None:
    prompt = texts.get(name)
    assert prompt.text.strip(), name
    assert prompt.notes, f"{name} says where it comes from"
    assert not prompt.text.startswith("#: ")
    filled = texts.render(name, **dummy_values(name))
    for key in prompt.placeholders:
        assert f"<{key}>" in filled
    assert "{" not in filled and "}" not in filled


def test_the_catalogue_holds_every_prompt_of_the_brief() -> None:
    names = set(texts.prompt_names())
    for game in ("airport_fee", "prisoner", "public_good"):
        for kind in ("global", "pgm", "pgm_decision"):
            assert {f"{game}_{kind}", f"{game}_{kind}.code"} <= names
    assert {
        "chameleon_global", "chameleon_role_desc", "undercover_role_desc",
        "chameleon_view_non_chameleon", "chameleon_view_chameleon",
        "chameleon_view_demo_chameleon", "chameleon_view_demo_non_chameleon",
        "chameleon_clue_demo_chameleon", "chameleon_clue_demo_non_chameleon",
        "chameleon_clue_non_chameleon", "chameleon_clue_chameleon",
        "chameleon_probe_consistency", "chameleon_probe_belief_non_chameleon",
        "chameleon_probe_belief_chameleon", "undercover_global_pgm", "undercover_pgm_header",
        "undercover_pgm_is_undercover", "undercover_clue_no", "undercover_probe_consistency",
        "prisoner_role_desc", "public_good_role_desc_player1", "chameleon_vote",
        "undercover_vote", "cost_sharing_vote", "default_request", "system_message",
    } <= names  # fmt: skip
    # every code wording has its paper prompt
    for name in names:
        if name.endswith(".code"):
            assert name.removesuffix(".code") in names


def test_prisoners_dilemma_global_prompt_is_the_spec_text() -> None:
    assert texts.text("prisoner_global") == PD_GLOBAL
    filled = texts.render("prisoner_global", cooperate=2, defect=1, one_defect=4, two_defect=2)
    assert (
        "they each get 2 points. - If all three choose to defect, they each get 1 point." in filled
    )


def test_only_the_apostrophe_the_spec_names_is_restored() -> None:
    text = texts.text("airport_fee_global")
    assert "strive to reach a consensus with other players' votes. - The game ends" in text
    assert text.count("'") == 1
    assert texts.text("public_good_global").startswith(
        "Welcome to the Public Good game. Below are the games settings and rules: - Each player"
    )


def test_the_code_wording_is_behind_a_switch() -> None:
    paper = texts.render("prisoner_pgm", player_name="Player 2", oth_player1="Player 1",
                         oth_player2="Player 3")  # fmt: skip
    code = texts.render("prisoner_pgm", wording="code", player_name="Player 2",
                        oth_player1="Player 1", oth_player2="Player 3")  # fmt: skip
    assert paper.startswith("Please try to analyze how other players will choose to defect or "
                            "corporate in the next round from your own perspective")  # fmt: skip
    assert code.startswith("Please try to analyze how other players will choose to defect or "
                           "corporate in next round from you own perspective and others' "
                           "perspective. \nYou must use the template:\nIn my opinion:\n"
                           "As Player 2,\nI think Player 1 will xx, because...\n")  # fmt: skip
    # A prompt with one source has one text for both wordings.
    assert texts.text("chameleon_global", "code") == texts.text("chameleon_global")
    # The code put PD's scoring rules in a moderator message, not in the global prompt.
    assert "{cooperate}" not in texts.text("prisoner_global", "code")
    assert "gets  {one_defect} points" in texts.text("prisoner_scoring")


def test_chameleon_global_prompt_first_lines() -> None:
    lines = texts.text("chameleon_global").split("\n")
    assert lines[:8] == [
        "You are playing a game of the Chameleon. Here are the game rules:",
        "",
        "## Information and roles",
        "There are two roles in the game, chameleon and non-chameleon.",
        "The topic of the secret word will be first revealed to all the players.",
        "Then the secret word will be revealed to non-chameleons.",
        "The chameleon does not know the secret word.",
        "",
    ]
    assert lines[-2] == (
        "- no change is used when you think it is hard to decide the player's role or the player "
        "hasn't given any clue."
    )


def test_clue_prompts_are_verbatim_with_their_trailing_spaces() -> None:
    non = texts.render("chameleon_clue_non_chameleon", player="Player 1", target_player="Player 3")
    assert non == (
        "Player 1, you are non-chameleon, your target is to increase the suspiciousness of the "
        "Player 3. For example, by giving more specific clues than the Player 3. Remember don't "
        "reveal the secret code; "
    )
    cham = texts.render("chameleon_clue_chameleon", player="Player 2", target_player="Player 1")
    assert cham.split("\n") == [
        "Player 2, you are chameleon, your target is to blend in and defraud trust from the "
        "Player 1, try to describing the same word as other players. ",
        "-If you are the first clue giver, try to be general in case exposing yourself.",
        "-If you guessed the secret code, try to give a specific clue about the word. ",
        "-If other players' clue are general, try give a clue similar to the Player 1's.",
    ]
    assert texts.render("undercover_clue_yes", player="Player 3") == (
        "Player 3, according to your previous analysis above to give your clue. "
    )
    assert texts.render("undercover_clue_no", player="Player 1", target_player="Player 2") == (
        "Player 1 according to your previous analysis, you think Player 2 is undercover. Try to "
        "increase Player 2's suspiciousness. For example, by giving more specific and different "
        "clues compared to the clue of Player 2. You can give a clue based on your above analysis. "
    )


def test_probe_texts_are_verbatim() -> None:
    assert texts.text("chameleon_probe_consistency") == (
        "Tell me which Player you are and what is your role in the game. Please use the template "
        '"I am Player xx, my role is chameleon/non-chameleon"'
    )
    belief = texts.render("chameleon_probe_belief_chameleon", player="Player 2").split("\n")
    assert belief[:5] == [
        "Player 2, deduce the secret code from all other players' clues and analyze who is more "
        "suspicious from the perspective of other players. ",
        "-Remember to guess secret code by combining other players clues, you can repeat your "
        "secret code guess every time.",
        '-Choose your evaluation for each player with phrases from ["more suspicious","less '
        'suspicious", "no change"].',
        "You must respond in the following format:",
        'I guess the secret code is "...", because...',
    ]
    assert texts.text("undercover_probe_preamble") == "Please answer the following questions.\n"
    assert texts.render("undercover_probe_belief_other", idx=2, other_player="Player 3") == (
        "2. Now try to guess now who Player 3 thinks is the undercover. (hint: use the fomat, I "
        "think Player 3 thinks Player xx is undercover, because...)\n"
    )


def test_demos_come_from_the_study_code() -> None:
    assert "good clue: my clue is speed\nbad clue: it requires teamwork\n" in texts.text(
        "chameleon_clue_demo_chameleon"
    )
    demo = texts.text("chameleon_view_demo_non_chameleon")
    assert demo.startswith("\nTo help you know how to analyze roles, here is an example:\n")
    assert "The word is:  Apple\n" in demo  # two spaces, as in the code
    assert any("MIT" in note for note in texts.get("chameleon_view_demo_chameleon").notes)


def test_chat_layout_of_section_2() -> None:
    system = texts.render("system_message", global_prompt="RULES", agent_name="Player 1",
                          role_desc="ROLE")  # fmt: skip
    assert system == (
        "RULES\nThe messages always end with the token <EOS>.\n\n"
        "Your name: Player 1\n\nYour role: ROLE"
    )
    assert texts.render("default_request", agent_name="Player 3") == "Now you speak, Player 3.<EOS>"
    assert texts.render("others_message", name="Player 2", content="hi") == (
        "\n\n[Player 2]: hi<EOS>"
    )


def test_unknown_name_and_missing_placeholder_are_one_line_errors() -> None:
    with pytest.raises(StratagemError, match="unknown MAgIC prompt 'chameleon_globl'") as err:
        texts.render("chameleon_globl")
    assert "chameleon_global" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(StratagemError, match="needs a value for target_player") as err:
        texts.render("chameleon_clue_chameleon", player="Player 1")
    assert "\n" not in str(err.value)
    with pytest.raises(StratagemError, match="wording"):
        texts.render("prisoner_global", wording="draft")  # type: ignore[arg-type]


def test_values_a_text_does_not_use_are_ignored() -> None:
    assert texts.render("chameleon_vote", player="Player 1").startswith("Now vote which")
