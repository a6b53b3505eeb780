"""The search window: query box, live results, score breakdown, detail and context."""
