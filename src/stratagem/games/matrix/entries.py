"""The named matrix games of seed-001 (the thesis' PD family) and seed-003 (its PD and RPS
families), with their exact payoffs, registered as built-in games.

Every payoff here is experimental material copied from a spec, with the section cited next to it.
Counterfactual variants are built as transformations of their default game (relabel, replace
payoffs, or both), as seed-003 §1 defines them, so a variant cannot drift from its base by a typo.

seed-003 gotcha (§0.1, §1.4): its PD result tables carry the wrong captions. Entries are named by
content with the code's keys (`pd-alt` = C/D labels with Stag Hunt payoffs, and so on); the caption
under which the paper prints each one is kept in `CatalogEntry.paper_caption`.
"""

from __future__ import annotations

from stratagem.games.catalog_entry import CatalogEntry
from stratagem.games.matrix.families import rock_paper_scissors, symmetric_tensor
from stratagem.games.matrix.normal_form import NormalFormGame
from stratagem.games.registry import register_game

# -- seed-001: the thesis' PD family (§2, §4.1) --------------------------------------------------


def dilemma() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Dilemma T=15 R=10 P=5 S=0.
    return NormalFormGame.prisoners_dilemma(
        "dilemma", t=15, r=10, p=5, s=0, description="Prisoner's Dilemma, T15 R10 P5 S0"
    )


def _delight() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Delight T=0 R=5 P=10 S=15.
    return NormalFormGame.prisoners_dilemma(
        "delight", t=0, r=5, p=10, s=15, description="Prisoner's Delight, T0 R5 P10 S15"
    )


def _confusion() -> NormalFormGame:
    # seed-001 §4.1: Prisoner's Confusion T=10 R=15 P=5 S=0.
    return NormalFormGame.prisoners_dilemma(
        "confusion", t=10, r=15, p=5, s=0, description="Prisoner's Confusion, T10 R15 P5 S0"
    )


# -- seed-003: PD family (§1.2) ------------------------------------------------------------------

# seed-003 §1.2: labels are full lowercase words, a then b.
_CD = ("cooperation", "defection")
_SH = ("stag", "hare")
# seed-003 §1.2: row payoffs aa, ab, ba, bb; PD (pd, sh-alt) = 4, 1, 6, 2;
# Stag Hunt (pd-alt, sh) = 6, 1, 4, 2.
_SH_ROW = [[6, 1], [4, 2]]


def _pd() -> NormalFormGame:
    # seed-003 §1.2 `pd`: aa=4 (R), ab=1 (S), ba=6 (T), bb=2 (P).
    return NormalFormGame.prisoners_dilemma(
        "pd",
        t=6,
        r=4,
        p=2,
        s=1,
        labels=_CD,
        description="Prisoner's Dilemma (seed-003 default), cooperation/defection, 4 1 6 2",
    )


def _pd_alt() -> NormalFormGame:
    # seed-003 §1.2 `pd-alt`: PD labels with Stag Hunt payoffs (App. B payoff-based).
    return _pd().transform(
        "pd-alt",
        payoffs=symmetric_tensor(_SH_ROW),
        description="Stag Hunt payoffs 6 1 4 2 under cooperation/defection labels",
    )


def _sh() -> NormalFormGame:
    # seed-003 §1.2 `sh`: stag/hare labels with Stag Hunt payoffs (App. B joint).
    return _pd().transform(
        "sh",
        labels=[_SH, _SH],
        payoffs=symmetric_tensor(_SH_ROW),
        description="Stag Hunt, stag/hare, 6 1 4 2",
    )


def _sh_alt() -> NormalFormGame:
    # seed-003 §1.2 `sh-alt`: stag/hare labels with PD payoffs (App. B label-based).
    return _pd().transform(
        "sh-alt",
        labels=[_SH, _SH],
        description="Prisoner's Dilemma payoffs 4 1 6 2 under stag/hare labels",
    )


# -- seed-003: RPS family (§1.3) -----------------------------------------------------------------

_RPS = ("rock", "paper", "scissors")
_PRS = ("paper", "rock", "scissors")  # seed-003 §1.3: the permuted a, b, c of eq1-alt and ba3-alt


def _eq1() -> NormalFormGame:
    # seed-003 §1.3 `eq1`: a,b,c = rock, paper, scissors; ac = ba = cb = 1.
    return rock_paper_scissors(
        "eq1", _RPS, 1, 1, 1, description="Rock-paper-scissors, every win pays 1"
    )


def _eq1_alt() -> NormalFormGame:
    # seed-003 §1.3 `eq1-alt`: a,b,c = paper, rock, scissors, same payoffs, so paper beats
    # scissors, rock beats paper, scissors beats rock.
    return _eq1().transform(
        "eq1-alt",
        labels=[_PRS, _PRS],
        description="Rock-paper-scissors with permuted dominance: rock beats paper, "
        "scissors beats rock, paper beats scissors",
    )


def _ba3() -> NormalFormGame:
    # seed-003 §1.3 `ba3`: rock, paper, scissors; ac=1, ba=3, cb=1 (paper beats rock pays 3).
    return _eq1().transform(
        "ba3",
        payoffs=rock_paper_scissors("ba3", _RPS, ac=1, ba=3, cb=1).payoffs,
        description="Rock-paper-scissors where paper beating rock pays 3",
    )


def _ba3_alt() -> NormalFormGame:
    # seed-003 §1.3 `ba3-alt`: paper, rock, scissors; ac=1, ba=3, cb=1 (rock beats paper pays 3).
    return _eq1().transform(
        "ba3-alt",
        labels=[_PRS, _PRS],
        payoffs=_ba3().payoffs,
        description="Rock-paper-scissors with permuted dominance where rock beating paper pays 3",
    )


def _register() -> None:
    s1, s3pd, s3rps = "seed-001 §4.1", "seed-003 §1.2", "seed-003 §1.3"
    for entry in [
        CatalogEntry("dilemma", dilemma().description(), s1, "seed-001-pd", dilemma, (10, 20)),
        CatalogEntry("delight", _delight().description(), s1, "seed-001-pd", _delight, (10, 20)),
        CatalogEntry(
            "confusion", _confusion().description(), s1, "seed-001-pd", _confusion, (10, 20)
        ),
        # seed-003 §1.2 table: code key, content, App. B name, and the caption of its tables.
        CatalogEntry(
            "pd", _pd().description(), s3pd, "seed-003-pd", _pd, (16,),
            counterfactual="default", paper_caption="PD",
        ),
        CatalogEntry(
            "pd-alt", _pd_alt().description(), s3pd, "seed-003-pd", _pd_alt, (16,),
            variant_of="pd", counterfactual="payoff-based", paper_caption="label-based",
        ),
        CatalogEntry(
            "sh", _sh().description(), s3pd, "seed-003-pd", _sh, (16,),
            variant_of="pd", counterfactual="joint", paper_caption="payoff-based",
        ),
        CatalogEntry(
            "sh-alt", _sh_alt().description(), s3pd, "seed-003-pd", _sh_alt, (16,),
            variant_of="pd", counterfactual="label-based", paper_caption="joint",
        ),
        # seed-003 §1.3 table: the RPS captions are correct.
        CatalogEntry(
            "eq1", _eq1().description(), s3rps, "seed-003-rps", _eq1, (24,),
            counterfactual="default", paper_caption="default",
        ),
        CatalogEntry(
            "eq1-alt", _eq1_alt().description(), s3rps, "seed-003-rps", _eq1_alt, (24,),
            variant_of="eq1", counterfactual="label-based", paper_caption="label-based",
        ),
        CatalogEntry(
            "ba3", _ba3().description(), s3rps, "seed-003-rps", _ba3, (24,),
            variant_of="eq1", counterfactual="payoff-based", paper_caption="payoff-based",
        ),
        CatalogEntry(
            "ba3-alt", _ba3_alt().description(), s3rps, "seed-003-rps", _ba3_alt, (24,),
            variant_of="eq1", counterfactual="joint", paper_caption="joint",
        ),
    ]:  # fmt: skip
        register_game(entry)


_register()
