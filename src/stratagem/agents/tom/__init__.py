"""seed-002's TradeCraft agents: the ToM agent, a TradeCraft seat that reports its item
valuations (V0, V1, V2) while it trades and crafts (`player`), with its prompt texts (`texts`)
and reply reading (`reports`); the crafting tools a model may call (`tools`) and the same tools
at a person's terminal (`human_tools`), which answer exactly as the model's do.
"""
