"""Task history: past commits and issues, searched by similarity, ranking files.

The "tasks" half of the dual task/file design (code search is the other): a repository's
``git log`` and JSONL issue-tracker exports become tasks (title, body, date, the
files they touched) in one SQLite file per repository, with FTS5 (BM25) and
sqlite-vec embeddings. A query finds similar past tasks (hybrid, fused by RRF) and
ranks the files those tasks touched. ``tributary.engine.servers.tasks`` serves it over MCP.
"""

from tributary.engine.paths import repo_id
from tributary.engine.tasks.api import (
    files_for_task,
    import_git_history,
    import_tasks_jsonl,
    open_index,
    search_tasks,
    task_stats,
    tasks_db_path,
)
from tributary.engine.tasks.model import FileScore, ImportStats, Task, TaskHit, TaskStats
from tributary.engine.tasks.ranking import FileRankParams
from tributary.engine.tasks.search import TaskIndex, TaskSearchParams

__all__ = [
    "FileRankParams",
    "FileScore",
    "ImportStats",
    "Task",
    "TaskHit",
    "TaskIndex",
    "TaskSearchParams",
    "TaskStats",
    "files_for_task",
    "import_git_history",
    "import_tasks_jsonl",
    "open_index",
    "repo_id",
    "search_tasks",
    "task_stats",
    "tasks_db_path",
]
