"""The instrumented extraction agent: tools, loop, engines, prompts and the LiteLLM transport."""
