"""seed-002's ToM agent: a TradeCraft seat that reports its item valuations (V0, V1, V2) while it
trades and crafts (`player`), with its prompt texts (`texts`) and reply reading (`reports`)."""
