"""The adversarial evaluation: agents with one planted flaw each, and correct agents."""
