"""stratagem: measure how LLM-based agents reason and behave in strategic games."""

__version__ = "0.1.0"
