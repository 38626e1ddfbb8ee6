"""Models: references (`embedded`, `gguf:`, `openai:`, `scripted`, `bot:`), the chat models
they make, local sampling, LangSmith settings and transport faults."""
