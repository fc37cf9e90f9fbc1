"""The MAgIC games (seed-004): the social-deduction games Chameleon and Undercover over their
shared vote and clue rules (`social_deduction`), and the game-theory games Cost Sharing, the
three-player dilemma (`magic_dilemma`) and the public-good game (`public_good`: the MAgIC
version, with its moderator chat and settings, is the one the catalog plays).

The moderator chat (`games.chat`) and the settings files (`games.settings_data`, `games/data/`)
stay beside `base` because TradeCraft uses them too.
"""
