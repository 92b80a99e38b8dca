class LLMExtractor: pass
