"""Fixtures for the task-history tests (helpers live in task_helpers.py)."""

from tests.tasks.task_helpers import embedder, git_repo, repo_dir, tasks_jsonl

__all__ = ["embedder", "git_repo", "repo_dir", "tasks_jsonl"]
