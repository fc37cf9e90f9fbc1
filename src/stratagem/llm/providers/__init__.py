"""One module per model provider, each exposing `create(config: ModelConfig) -> Provider`.

They are imported lazily by `stratagem.llm.registry`, so a provider's client library is needed only
when one of its models is used.
"""
