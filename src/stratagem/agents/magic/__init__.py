"""Building blocks of the MAgIC agents (seed-004): the study's prompt texts as data (`texts`), the
PGM belief mathematics (`belief`), and the parsers of analyses (`analysis_parse`), metric probes
(`probes`) and votes/decisions (`vote_parse`), and the request texts of the social games' PGM
pipeline (`pgm_requests`).

Everything here is pure (no model calls, no I/O beyond reading the packaged prompt files), so the
agent architectures that assemble chats and run the PGM pipeline stay thin, and the study's
metrics can re-parse stored answers exactly as the agents did.
"""
