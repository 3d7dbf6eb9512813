"""Test and demo fixtures that ship with the package: the scripted fake upstream LLM."""
