"""TradeCraft (seed-002): the two-player trade-and-craft game (`game`), its structured moves
(`actions`), the Minecraft crafting rules with their packaged data (`rules`, `data/`, read only
here) and the study's instances and the search that generated them (`instances`,
`instances_search`; the instances ship as a settings file in `games/data/`).
"""
