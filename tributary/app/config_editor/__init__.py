"""The configuration editor: servers, routing rules, ranking/budget/cache settings."""
