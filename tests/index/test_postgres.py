"""The shared PostgreSQL index under a team's conditions: two indexers at once, readers
while a writer replaces files, a connection dropped mid-search, a server restart."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import psycopg
import pytest
from mcp import Client

from tests.index.index_helpers import HashingEmbedder, make_repo
from tests.postgres_server import restart
from tributary.engine.index.backend import IndexBackend
from tributary.engine.index.chunking import Chunk
from tributary.engine.index.manager import index_repository, list_indexes, open_index_store
from tributary.engine.index.naming import readable_name
from tributary.engine.index.pg_store import PgIndexStore
from tributary.engine.index.search import hybrid_search
from tributary.engine.index.store import FileRecord, SearchFilter
from tributary.engine.postgres.db import Database, PostgresError, migrate
from tributary.engine.postgres.repositories import ensure_repository
from tributary.engine.postgres.schema import MIGRATIONS
from tributary.engine.servers.files import FilesService, build_server
from tributary.engine.tasks.pg_store import PgTaskStore

pytestmark = pytest.mark.postgres

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import sys
sys.path.insert(0, {root!r})
from pathlib import Path
from tributary.engine.index.backend import IndexBackend
from tributary.engine.index.manager import index_repository
from tests.index.index_helpers import HashingEmbedder
index_repository(Path({repo!r}), embedder=HashingEmbedder(delay_s=0.002), backend=IndexBackend({dsn!r}))
"""


def _big_repo(root: Path, files: int = 40) -> Path:
    make_repo(root)
    for i in range(files):
        body = "\n\n".join(f"def handler_{i}_{j}(request):\n    return request.value + {j}\n" for j in range(6))
        (root / "pkg" / f"module_{i:02d}.py").parent.mkdir(parents=True, exist_ok=True)
        (root / "pkg" / f"module_{i:02d}.py").write_text(body, encoding="utf-8")
    return root


def _consistent(dsn: str) -> list[tuple[str, int, int]]:
    """Files whose recorded chunk count differs from the chunks stored for them."""
    with psycopg.connect(dsn) as conn:
        return [(str(p), int(a), int(b)) for p, a, b in conn.execute(
            "SELECT f.path, f.chunks, COUNT(c.id) FROM files f LEFT JOIN chunks c ON c.file_id = f.id "
            "GROUP BY f.id HAVING f.chunks <> COUNT(c.id)").fetchall()]  # fmt: skip


def test_migrations_are_recorded_in_the_database(postgres_dsn: str) -> None:
    db = Database(postgres_dsn)
    try:
        with db.session() as conn:
            versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations ORDER BY version")]
            assert versions == list(range(1, len(MIGRATIONS) + 1))
            assert migrate(conn) == len(MIGRATIONS)  # idempotent
            with pytest.raises(PostgresError, match="newer"):
                migrate(conn, ())
    finally:
        db.close()


def test_a_database_of_the_first_schema_is_brought_up_to_date(postgres_dsn: str) -> None:
    """Tasks written before the author column keep theirs empty; new ones store it."""
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert migrate(conn, MIGRATIONS[:1]) == 1
        repo = conn.execute("INSERT INTO repositories(root, name) VALUES ('/r', 'r') RETURNING id").fetchone()
        assert repo is not None
        conn.execute(
            "INSERT INTO tasks(repo, task_id, ts, date, title, body, source, hash, terms) "
            "VALUES (%s, 'old', 0, '2020-01-01T00:00:00+00:00', 'Old', '', 'git', 'h', ''::tsvector)",
            (repo[0],),
        )
    store = PgTaskStore.open(postgres_dsn, "/r", create=False)
    assert store is not None
    try:
        [old] = store.load(_all_task_rows(postgres_dsn)).values()
        assert old.id == "old" and old.author == ""
    finally:
        store.close()


def test_a_task_history_model_of_the_old_layout_is_migrated(postgres_dsn: str) -> None:
    """A task history recorded its model as one ``embedder`` key (``name|version|dim``);
    it now keeps the code index's ``model_name``/``model_dim``/``model_version``."""
    from tributary.engine.localsearch.embedder import ModelInfo

    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        assert migrate(conn, MIGRATIONS[:3]) == 3
        repo = conn.execute("INSERT INTO repositories(root, name) VALUES ('/r', 'r') RETURNING id").fetchone()
        assert repo is not None
        conn.execute("INSERT INTO repo_meta(repo, scope, key, value) VALUES (%s, 'tasks', 'embedder', %s)",
                     (repo[0], "test-hashing|1;onnx|a|64"))  # fmt: skip
    store = PgTaskStore.open(postgres_dsn, "/r", create=False)
    assert store is not None
    try:
        assert store.model() == ModelInfo("test-hashing", 64, "1;onnx|a")
        assert store.has_vectors() and store.get_meta("embedder") is None
        assert store.stats().embedder == "test-hashing|1;onnx|a|64"
    finally:
        store.close()


def _all_task_rows(dsn: str) -> list[int]:
    with psycopg.connect(dsn) as conn:
        return [int(r[0]) for r in conn.execute("SELECT id FROM tasks").fetchall()]


def test_two_indexers_at_once_leave_one_consistent_index(postgres_dsn: str, tmp_path: Path) -> None:
    """Two ``index add`` of the same repository and one of another, all at once."""
    same = _big_repo(tmp_path / "same")
    other = _big_repo(tmp_path / "other", files=10)
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD.format(root=str(ROOT), repo=str(repo), dsn=postgres_dsn)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for repo in (same, same, other)
    ]  # fmt: skip
    for child in children:
        _out, err = child.communicate(timeout=180)
        assert child.returncode == 0, err.decode()[-2000:]
    backend = IndexBackend(postgres_dsn)
    infos = {Path(info.name).name: info for info in list_indexes(backend=backend)}
    assert set(infos) == {"same", "other"}
    assert {i.name for i in infos.values()} == {readable_name(same), readable_name(other)}
    assert _consistent(postgres_dsn) == []
    # Exactly what one indexer alone writes: nothing twice, nothing missing.
    alone = index_repository(same, embedder=HashingEmbedder(), index_dir=tmp_path / "sqlite")
    assert (infos["same"].files, infos["same"].chunks) == (alone.files_total, alone.chunks_total)
    again = index_repository(same, embedder=HashingEmbedder(), backend=backend)
    assert again.files_indexed == 0 and again.chunks_embedded == 0


def test_readers_never_see_a_half_written_file(postgres_dsn: str) -> None:
    db = Database(postgres_dsn)
    repo = ensure_repository(db, "/team/repo", "repo")
    writer = PgIndexStore(db, repo)
    embedder = HashingEmbedder()
    writer.set_model(embedder_info(embedder))
    versions = {
        name: [Chunk("a.py", "python", "function", i * 3 + 1, i * 3 + 2, f"def {name}_{i}(): pass", f"{name}_{i}")
               for i in range(count)]
        for name, count in (("alpha", 3), ("beta", 7))
    }  # fmt: skip
    seen: list[frozenset[str]] = []
    stop = threading.Event()

    def read() -> None:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            while not stop.is_set():
                rows = conn.execute("SELECT symbol FROM chunks WHERE repo = %s", (repo,)).fetchall()
                seen.append(frozenset(str(r[0]) for r in rows))

    reader = threading.Thread(target=read)
    reader.start()
    try:
        for round_ in range(60):
            name = "alpha" if round_ % 2 else "beta"
            chunks = versions[name]
            record = FileRecord("a.py", f"h{round_}", round_, round_, "python")
            vectors = embedder.encode([c.content for c in chunks])
            writer.write_file(record, chunks, {c.embed_hash: v for c, v in zip(chunks, vectors, strict=True)})
    finally:
        stop.set()
        reader.join()
        db.close()
    whole = {frozenset(c.symbol or "" for c in chunks) for chunks in versions.values()}
    assert len(seen) > 10
    assert {s for s in seen if s} <= whole  # every read saw one version, complete


def test_twenty_desktops_search_while_one_indexes(postgres_dsn: str, repo: Path) -> None:
    """Each desktop its own connections; every search answers, and every file the
    indexer wrote meanwhile is there afterwards, whole."""
    embedder = HashingEmbedder()
    backend = IndexBackend(postgres_dsn)
    index_repository(repo, embedder=embedder, backend=backend)
    query = embedder.encode(["invoice tax total"])[0]
    answered: set[int] = set()
    errors: list[BaseException] = []
    stop = threading.Event()

    def desktop(number: int) -> None:
        store = open_index_store(repo, backend=backend)
        try:
            while not stop.is_set():
                hits = hybrid_search(store, "invoice tax total", query, repo="repo", top_k=5)
                assert hits and hits[0].path == "src/billing/invoice.py"
                answered.add(number)
        except BaseException as exc:
            errors.append(exc)
        finally:
            store.close()

    desktops = [threading.Thread(target=desktop, args=(n,)) for n in range(20)]
    for thread in desktops:
        thread.start()
    indexer = PgIndexStore.open(postgres_dsn, str(repo.resolve()), None)
    written: dict[str, str] = {}
    try:
        round_ = 0
        while (len(answered) < 20 and not errors) or round_ < 3:
            for i in range(10):
                path = f"pkg/extra_{i}.py"
                chunks = [Chunk(path, "python", "function", 1, 2, f"def extra_{i}_{round_}(): pass", f"x{i}.{round_}")]
                vectors = embedder.encode([c.content for c in chunks])
                indexer.write_file(FileRecord(path, f"h{round_}", 1, round_, "python"), chunks,
                                   {c.embed_hash: v for c, v in zip(chunks, vectors, strict=True)})  # fmt: skip
                written[path] = f"h{round_}"
            round_ += 1
    finally:
        stop.set()
        for thread in desktops:
            thread.join()
    states = indexer.file_states()
    indexer.close()
    assert not errors, errors[0]
    assert answered == set(range(20))
    assert all(states[path].hash == digest for path, digest in written.items())
    assert _consistent(postgres_dsn) == []


def embedder_info(embedder: HashingEmbedder) -> Any:
    from tributary.engine.index.store import ModelInfo

    return ModelInfo(embedder.name, embedder.dim, embedder.version)


def _terminate(dsn: str, application: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = %s",
            (application,),
        ).fetchall()
    return len(rows)


def _allow_connections(dsn: str, allow: bool) -> None:
    name = psycopg.conninfo.conninfo_to_dict(dsn)["dbname"]
    admin = dsn.replace(f"/{name}?", "/postgres?")
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE {name} WITH ALLOW_CONNECTIONS {'true' if allow else 'false'}")


class _DroppingEmbedder(HashingEmbedder):
    """Cuts the files server's connection while it embeds a query (the keyword query has
    run or is running; the dense one has not)."""

    def __init__(self, dsn: str) -> None:
        super().__init__()
        self.dsn = dsn
        self.drop = False
        self.block = False
        self.dropped = 0

    def encode(self, texts: Any) -> Any:
        if self.drop:
            if self.block:
                _allow_connections(self.dsn, False)
            else:
                self.drop = False  # once: a retry's new connection is not cut again
            self.dropped += _terminate(self.dsn, "tributary-files")
        return super().encode(texts)


@pytest.mark.asyncio
async def test_a_connection_dropped_mid_search_is_an_error_of_that_source_only(
    postgres_dsn: str, repo: Path
) -> None:
    embedder = _DroppingEmbedder(postgres_dsn)
    backend = IndexBackend(postgres_dsn)
    index_repository(repo, embedder=embedder, backend=backend)
    service = FilesService(None, embedder=embedder, backend=backend)
    args = {"query": "invoice tax total", "top_k": 5}
    try:
        async with Client(build_server(service)) as client:
            assert not (await client.call_tool("search_code", args)).is_error
            embedder.drop = True  # its connections cut once: the read is retried on a new one
            dropped = await client.call_tool("search_code", args)
            assert embedder.dropped >= 1
            assert not dropped.is_error and dropped.structured_content["hits"]
            embedder.drop = embedder.block = True  # dropped, and no new connection allowed
            failed = await client.call_tool("search_code", args)
            assert failed.is_error
            _allow_connections(postgres_dsn, True)
            embedder.drop = embedder.block = False
            after = await client.call_tool("search_code", args)  # the server is still up
            assert not after.is_error
            assert after.structured_content["hits"][0]["path"] == "src/billing/invoice.py"
    finally:
        _allow_connections(postgres_dsn, True)
        service.close()


def test_searches_survive_a_server_restart(postgres_server: Any, postgres_dsn: str, repo: Path) -> None:
    embedder = HashingEmbedder()
    backend = IndexBackend(postgres_dsn)
    index_repository(repo, embedder=embedder, backend=backend)
    store = open_index_store(repo, backend=backend)
    vector = embedder.encode(["invoice tax total"])[0]
    answers: list[int] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def load() -> None:
        while not stop.is_set():
            try:
                dense, keyword = store.candidates("invoice tax total", vector, 20, SearchFilter())
                answers.append(len(dense) + len(keyword))
            except Exception as exc:  # the outage: each query fails on its own
                errors.append(exc)
                time.sleep(0.05)

    worker = threading.Thread(target=load)
    worker.start()
    try:
        time.sleep(0.3)
        restart(postgres_server)
        time.sleep(0.3)
    finally:
        stop.set()
        worker.join()
    try:
        assert answers and all(n > 0 for n in answers)
        assert all(isinstance(e, psycopg.Error | PostgresError) for e in errors)
        dense, keyword = store.candidates("invoice tax total", vector, 20, SearchFilter())  # the next query
        assert dense and keyword
    finally:
        store.close()


def test_the_cli_app_worker_and_builtins_follow_the_configured_index(
    postgres_dsn: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.tasks.task_helpers import HashEmbedder, commit
    from tributary.app import index_worker
    from tributary.engine.cli.main import main
    from tributary.engine.config.load import load_config
    from tributary.engine.index import embed, manager
    from tributary.engine.repos import builtins
    from tributary.engine.repos import manage as repos
    from tributary.engine.tasks.api import task_stats

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("TRIBUTARY_HOME", str(home))
    monkeypatch.setenv("HOME", str(tmp_path))  # repositories are named relative to it
    monkeypatch.setenv("TEAM_INDEX_DSN", postgres_dsn)
    monkeypatch.setattr(manager, "load_code_embedder", lambda: HashingEmbedder())
    monkeypatch.setattr(embed, "load_default_embedder", lambda: HashEmbedder())
    monkeypatch.setattr(os, "nice", lambda increment: 0)  # (not this test process's priority)
    (home / "config.yaml").write_text("index:\n  backend: postgres\n  dsn: ${TEAM_INDEX_DSN}\n", encoding="utf-8")
    checkout = _one_commit(tmp_path / "checkout")
    commit(checkout, {"src/billing.py": "def invoice_total(lines):\n    return sum(lines)\n"},
           "Add invoice totals", "2024-02-01T10:00:00+00:00")

    assert main(["index", "add", str(checkout)]) == 0
    assert "checkout: history: 2 new commits" in capsys.readouterr().err
    assert task_stats(checkout).tasks == 2
    assert main(["index", "list"]) == 0
    _header, row = capsys.readouterr().out.splitlines()
    assert row.split()[0] == "checkout" and row.split()[3] == "2"
    assert main(["index", "status", str(checkout)]) == 0
    status = capsys.readouterr().out
    assert "history: 2 tasks touching" in status and "(hnsw vector index)" in status
    assert not (home / "data" / "indexes").exists()  # nothing went to local SQLite files

    # The app's Indexes page: the worker indexes, the listing lists, through the engine.
    assert index_worker.main([str(checkout)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith('{"event": "done"')
    assert [(i.root, i.tasks) for i in repos.list_repositories()] == [(checkout.resolve(), 2)]

    servers = builtins.with_builtin_servers(load_config()).servers
    assert "--postgres" in servers["files"].args and "--postgres" in servers["tasks"].args
    assert servers["files"].env["TRIBUTARY_INDEX_DSN"] == "${TEAM_INDEX_DSN}"  # expanded at start

    assert main(["index", "remove", str(checkout)]) == 0
    assert repos.list_repositories() == [] and task_stats(checkout).tasks == 0
    with psycopg.connect(postgres_dsn) as conn:  # asking about it made no row for it
        assert conn.execute("SELECT COUNT(*) FROM repositories").fetchone() == (0,)


@pytest.mark.integration
@pytest.mark.asyncio
async def test_the_builtin_servers_serve_the_shared_index(postgres_dsn: str, repo: Path, tmp_path: Path) -> None:
    """Both servers as the engine starts them: subprocesses, the DSN in their environment."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from tests.tasks.task_helpers import FIXTURE_TASKS, write_jsonl
    from tributary.engine.tasks.api import import_tasks_jsonl

    backend = IndexBackend(postgres_dsn)
    index_repository(repo, embedder=HashingEmbedder(), backend=backend)
    import_tasks_jsonl(repo, write_jsonl(tmp_path / "t.jsonl", FIXTURE_TASKS), embed=False, backend=backend)
    env = {**os.environ, "PYTHONPATH": str(ROOT), "TRIBUTARY_INDEX_DSN": postgres_dsn}
    calls = {
        "tributary.engine.servers.files": ("search_code", {"query": "invoice total tax", "top_k": 5}, ["--model-wait", "0"]),
        "tributary.engine.servers.tasks": ("search_tasks", {"query": "login session", "top_k": 5}, ["--no-embed"]),
    }
    for module, (tool, arguments, extra) in calls.items():
        params = StdioServerParameters(command=sys.executable, args=["-m", module, "--postgres", *extra],
                                       env=env, cwd=str(ROOT))  # fmt: skip
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            result = await session.call_tool(tool, arguments)
            assert not result.is_error, result.content
            found = result.structured_content
            assert found is not None
            if tool == "search_code":
                assert found["hits"][0]["path"] == "src/billing/invoice.py"
                assert found["repos"] == [readable_name(repo)]  # as the SQLite indexes name it
            else:
                assert found["results"] and found["results"][0]["repo"] == readable_name(repo)


@pytest.mark.parametrize("wanted", ["auto", "hnsw", "ivfflat", "exact"])
def test_each_vector_index_is_built_and_searched(
    wanted: str, postgres_dsn: str, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.index.index_helpers import search_repository
    from tributary.engine.index import pg_store

    monkeypatch.setattr(pg_store, "IVFFLAT_MIN_ROWS", 10)  # the test repository is small
    backend = IndexBackend(postgres_dsn, wanted)
    embedder = HashingEmbedder()
    index_repository(repo, embedder=embedder, backend=backend)
    with psycopg.connect(postgres_dsn) as conn:
        methods = [str(r[0]) for r in conn.execute(
            "SELECT am.amname FROM pg_class c JOIN pg_am am ON am.oid = c.relam "
            "WHERE c.relname LIKE 'chunks_vec_r%'").fetchall()]  # fmt: skip
    expected = {"auto": ["hnsw"], "hnsw": ["hnsw"], "ivfflat": ["ivfflat"], "exact": []}[wanted]
    assert methods == expected  # auto: the best this server has
    (info,) = list_indexes(backend=backend)
    assert f"({expected[0] if expected else 'exact'} vector index)" in info.location
    hits = search_repository(repo, "invoice tax total", embedder=embedder, backend=backend)
    assert hits[0].path == "src/billing/invoice.py"


def test_desktops_can_search_with_a_read_only_role(postgres_dsn: str, repo: Path) -> None:
    from tests.index.index_helpers import search_repository

    embedder = HashingEmbedder()
    index_repository(repo, embedder=embedder, backend=IndexBackend(postgres_dsn))
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS reader_t")
        conn.execute("CREATE ROLE reader_t LOGIN")
        conn.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader_t")
    reader = IndexBackend(postgres_dsn.replace("postgresql://postgres:@", "postgresql://reader_t:@"))
    try:
        hits = search_repository(repo, "invoice tax total", embedder=embedder, backend=reader)
        assert hits[0].path == "src/billing/invoice.py"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            index_repository(repo / "src", embedder=embedder, backend=reader)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as conn:
            conn.execute("REVOKE ALL ON ALL TABLES IN SCHEMA public FROM reader_t")
            conn.execute("DROP ROLE reader_t")


def test_the_team_setup_in_the_docs_works(postgres_dsn: str, repo: Path) -> None:
    """docs/postgres.md: a database the indexer role owns (the superuser only adds the
    extension), a reader role granted by default privileges; the indexer indexes, a
    desktop searches as the reader and cannot write."""
    from tests.index.index_helpers import search_repository

    info = psycopg.conninfo.conninfo_to_dict(postgres_dsn)

    def as_user(user: str, dbname: str) -> str:
        return psycopg.conninfo.make_conninfo(**{**info, "user": user, "dbname": dbname, "password": ""})

    with psycopg.connect(postgres_dsn, autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS team_t")
        for role in ("indexer_t", "desktop_t"):
            admin.execute(f"DROP ROLE IF EXISTS {role}")
            admin.execute(f"CREATE ROLE {role} LOGIN")
        admin.execute("CREATE DATABASE team_t OWNER indexer_t")
    try:
        with psycopg.connect(as_user(str(info["user"]), "team_t"), autocommit=True) as admin:
            admin.execute("CREATE EXTENSION vector")
            admin.execute("ALTER DEFAULT PRIVILEGES FOR ROLE indexer_t IN SCHEMA public "
                          "GRANT SELECT ON TABLES TO desktop_t")  # fmt: skip
            admin.execute("GRANT CONNECT ON DATABASE team_t TO desktop_t")
            admin.execute("GRANT USAGE ON SCHEMA public TO desktop_t")
        embedder = HashingEmbedder()
        index_repository(repo, embedder=embedder, backend=IndexBackend(as_user("indexer_t", "team_t")))
        desktop = IndexBackend(as_user("desktop_t", "team_t"))
        hits = search_repository(repo, "invoice tax total", embedder=embedder, backend=desktop)
        assert hits[0].path == "src/billing/invoice.py"
        with pytest.raises(psycopg.errors.InsufficientPrivilege):
            index_repository(repo / "src", embedder=embedder, backend=desktop)
    finally:
        with psycopg.connect(postgres_dsn, autocommit=True) as admin:
            admin.execute("DROP DATABASE IF EXISTS team_t WITH (FORCE)")
            for role in ("indexer_t", "desktop_t"):
                admin.execute(f"DROP ROLE IF EXISTS {role}")



def test_a_task_history_searches_alike_on_both_backends(postgres_dsn: str, tmp_path: Path) -> None:
    """Each backend's task store searches through its collection (``PgCollection`` here,
    ``SqliteCollection`` there): the same history gives the same neighbours, exact and
    ties by id, and the same tasks for its words, before a cut-off too."""
    from datetime import UTC, datetime

    import numpy as np

    from tests.tasks.task_helpers import HashEmbedder
    from tributary.engine.postgres.collection import PgCollection
    from tributary.engine.tasks.model import ImportStats, Task
    from tributary.engine.tasks.store import TaskStore

    embedder = HashEmbedder()
    words = ["login", "session", "cookie", "export", "csv", "report", "mail", "reset"]
    rng = np.random.default_rng(5)
    tasks = [Task(id=f"t{i}", date=datetime(2010 + i % 12, 1 + i % 9, 1, tzinfo=UTC),
                  title=" ".join(rng.choice(words, 3)), files=(f"app/m{i % 5}.py",)) for i in range(60)]  # fmt: skip
    pg = PgTaskStore.open(postgres_dsn, str(tmp_path / "history"))
    assert pg is not None and isinstance(pg.collection, PgCollection)
    local = TaskStore(tmp_path / "tasks.sqlite")
    try:
        for store in (pg, local):
            store.upsert(tasks, ImportStats(source="test"), embedder=embedder)
        local_task_of = dict(local.conn.execute("SELECT id, task_id FROM tasks").fetchall())
        pg_task_of = dict(pg.db.read(lambda c: c.execute("SELECT id, task_id FROM tasks WHERE repo = %s",
                                                         (pg.repo,)).fetchall()))  # fmt: skip
        cutoff = int(datetime(2015, 6, 1, tzinfo=UTC).timestamp())
        for query in ("login cookie", "csv export report"):
            vector = embedder.encode([query])[0]
            for as_of in (None, cutoff):
                near_pg = [(round(s, 4), pg_task_of[i]) for i, s in pg.knn(vector, 100, as_of)]
                near_local = [(round(s, 4), local_task_of[i]) for i, s in local.knn(vector, 100, as_of)]
                # the same scores best first (float rounding may swap equal ones)
                assert [s for s, _ in near_pg] == [s for s, _ in near_local]
                assert sorted(near_pg) == sorted(near_local) and len(near_pg) >= 20
                by_words_pg = {pg_task_of[i] for i, _ in pg.bm25(query, 100, as_of)}
                by_words_local = {local_task_of[i] for i, _ in local.bm25(query, 100, as_of)}
                assert by_words_pg == by_words_local and by_words_pg
    finally:
        pg.close()
        local.close()


def test_a_task_history_ranks_its_words_by_bm25_alike_on_both_backends(postgres_dsn: str, tmp_path: Path) -> None:
    """The shared history ranks a question's words by BM25 from its postings, with the
    SQLite history's column weights and its average length: the same tasks in the same
    order, before a cut-off too; a rewritten task's old words find nothing, and a
    history that grows longer gets its weights made again."""
    from datetime import UTC, datetime

    from tributary.engine.tasks.model import ImportStats, Task
    from tributary.engine.tasks.store import TaskStore

    def task(i: int, title: str, body: str = "", files: tuple[str, ...] = ()) -> Task:
        return Task(id=f"t{i}", date=datetime(2012 + i, 1, 1, tzinfo=UTC), title=title, body=body, files=files)

    tasks = [
        task(0, "fix login cookie expiry", "the session cookie expired early", ("app/auth.py",)),
        task(1, "export report as csv", "csv export of the monthly report", ("app/report.py",)),
        task(2, "login page layout", "", ("app/templates/login.html",)),
        task(3, "cookie banner text", "legal asked for a new cookie banner text on every page of the site"),
        task(4, "mail reset link", "password reset mail had a broken link", ("app/mail.py", "app/auth.py")),
        task(5, "speed up csv parsing", "", ("app/csv_reader.py",)),
    ]
    pg = PgTaskStore.open(postgres_dsn, str(tmp_path / "ranked-history"))
    assert pg is not None
    local = TaskStore(tmp_path / "ranked.sqlite")
    try:
        for store in (pg, local):
            store.upsert(tasks, ImportStats(source="test"))
        local_task_of = dict(local.conn.execute("SELECT id, task_id FROM tasks").fetchall())
        pg_task_of = dict(pg.db.read(lambda c: c.execute("SELECT id, task_id FROM tasks WHERE repo = %s",
                                                         (pg.repo,)).fetchall()))  # fmt: skip

        def ranked(store: Any, task_of: dict[Any, Any], query: str, as_of: int | None = None) -> list[str]:
            return [task_of[i] for i, _ in store.bm25(query, 10, as_of)]

        cutoff = int(datetime(2015, 6, 1, tzinfo=UTC).timestamp())
        for query in ("login cookie", "csv export report", "auth mail", "cookie"):
            for as_of in (None, cutoff):
                assert ranked(pg, pg_task_of, query, as_of) == ranked(local, local_task_of, query, as_of), query
        assert ranked(pg, pg_task_of, "login cookie")[0] == "t0"

        pg.upsert([task(0, "receipt printer driver")], ImportStats(source="test"))
        assert "t0" not in ranked(pg, pg_task_of, "expiry session") and ranked(pg, pg_task_of, "receipt") == ["t0"]
        before = pg.get_meta("postings_length")
        long_body = " ".join(f"word{n}" for n in range(200))
        pg.upsert([task(10 + i, f"long task {i}", long_body) for i in range(6)], ImportStats(source="test"))
        assert before is not None and float(pg.get_meta("postings_length") or 0) > 2 * float(before)
    finally:
        pg.close()
        local.close()


def test_a_snake_case_name_is_found_whole_on_both_backends(postgres_dsn: str, tmp_path: Path) -> None:
    """``deny_unknown_fields`` is searched as one identifier as well as its words: the
    chunk that uses it comes before chunks that only hold ``deny``, ``unknown`` and
    ``fields`` more often."""
    from tributary.engine.index.store import SqliteStore

    db = Database(postgres_dsn)
    pg = PgIndexStore(db, ensure_repository(db, "/team/snake", "snake"))
    local = SqliteStore(tmp_path / "files.sqlite")
    texts = {
        "attr.py": "deny unknown fields: deny the unknown fields, unknown fields denied",
        "codegen.py": "if has_flatten and cattrs.deny_unknown_fields(): collect",
        "check.py": "fields unknown to the container deny nothing",
        **{f"pad{i}.py": f"filler text {i}" for i in range(6)},
    }
    try:
        for store in (pg, local):
            _write_texts(store, texts)
        pg.ensure_vector_index()
        for store in (pg, local):
            hits = store.keyword_search("why is deny_unknown_fields ignored", 10, SearchFilter())
            paths = store.chunks_by_id([cid for cid, _ in hits])
            assert paths[hits[0][0]].path == "codegen.py", store
    finally:
        pg.close()
        local.close()
        db.close()


def _write_texts(store: Any, texts: dict[str, str]) -> None:
    """One chunk a file, each file's text as given."""
    for round_, (path, text) in enumerate(texts.items()):
        chunk = Chunk(path, "python", "function", 1, 1, text, path.removesuffix(".py"), embed_text=text)
        store.write_file(FileRecord(path, f"h{round_}", 1, round_, "python"), [chunk], {})


_TEXTS = {
    "invoice.py": "invoice total tax invoice lines total",
    "tax.py": "tax rate tax table country tax",
    "cart.py": "cart items total discount",
    "notes.py": "meeting notes about the invoice layout and colours and fonts and margins and paper",
    "mail.py": "mail send retry queue",
}


def test_keyword_search_ranks_by_bm25_alike_on_both_backends(postgres_dsn: str, tmp_path: Path) -> None:
    """The shared index ranks a question's words by BM25 from its postings, as SQLite's
    FTS5 does: the same files in the same order, and a rewritten or deleted file's old
    words find nothing."""
    from tributary.engine.index.store import SqliteStore

    db = Database(postgres_dsn)
    pg = PgIndexStore(db, ensure_repository(db, "/team/bm25", "bm25"))
    local = SqliteStore(tmp_path / "files.sqlite")
    try:
        for store in (pg, local):
            _write_texts(store, _TEXTS)
        pg.ensure_vector_index()  # (the counts of each word, as after an indexing pass)

        def ranked(store: Any, query: str, where: SearchFilter | None = None) -> list[str]:
            hits = store.keyword_search(query, 10, where or SearchFilter())
            paths = store.chunks_by_id([cid for cid, _ in hits])
            return [paths[cid].path for cid, _ in hits]

        for query in ("invoice total", "tax invoice", "total discount", "queue"):
            assert ranked(pg, query) == ranked(local, query), query
        assert ranked(pg, "invoice total")[:2] == ["invoice.py", "cart.py"]
        only = SearchFilter(path_ids=pg.chunk_ids_matching("notes.py"))
        assert ranked(pg, "invoice total", only) == ["notes.py"]  # a filter reads every posting

        _write_texts(pg, {"invoice.py": "receipt printer"})
        assert ranked(pg, "lines") == [] and "invoice.py" not in ranked(pg, "total")
        assert ranked(pg, "receipt") == ["invoice.py"]
        pg.delete_files(["invoice.py"])
        assert ranked(pg, "receipt") == []
        left = db.read(lambda c: c.execute(
            "SELECT COUNT(*) FROM chunk_postings p LEFT JOIN chunks c ON c.id = p.chunk WHERE c.id IS NULL"
        ).fetchone())  # fmt: skip
        assert left == (0,)
    finally:
        pg.close()
        db.close()
        local.close()


def test_a_word_in_many_chunks_is_read_only_where_it_weighs_most(
    postgres_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without a filter a search reads each word's best postings only: a chunk where the
    rare word stands still ranks first however many chunks hold the common one."""
    from tributary.engine.index import pg_store

    db = Database(postgres_dsn)
    pg = PgIndexStore(db, ensure_repository(db, "/team/many", "many"))
    try:
        texts = {f"m{i:02d}.py": ("render page " if i % 3 == 0 else "other page ") + "filler " * (i % 7)
                 for i in range(40)}  # fmt: skip
        texts["special.py"] = "render frobnicate"
        _write_texts(pg, texts)
        monkeypatch.setattr(pg_store, "POSTINGS_PER_WORD", 5)
        hits = pg.keyword_search("render frobnicate", 3, SearchFilter())
        paths = [pg.chunks_by_id([cid])[cid].path for cid, _ in hits]
        assert paths[0] == "special.py" and hits[0][1] > hits[1][1]
        assert len(hits) == 3 and paths[1] in ("m00.py", "m21.py")  # the shortest that hold "render"
    finally:
        pg.close()
        db.close()


def test_the_best_chunks_found_get_the_weight_of_every_word(postgres_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk found through its rare word, where the common word does not weigh enough
    to be among that word's best postings, still gets the common word's share of its
    score: the best chunks found are scored by every word, as a full read would."""
    from tributary.engine.index import pg_store

    db = Database(postgres_dsn)
    pg = PgIndexStore(db, ensure_repository(db, "/team/complete", "complete"))
    try:
        texts = {f"p{i:02d}.py": "page " * (1 + i % 4) for i in range(30)}
        texts |= {f"q{i:02d}.py": "misc" for i in range(40)}  # ("page" is in under half)
        texts["special.py"] = "frobnicate page " + "filler " * 60  # its "page" weighs little
        texts["other.py"] = "frobnicate " + "filler " * 61
        _write_texts(pg, texts)
        pg.ensure_vector_index()

        def scored(per_word: int, completed: int) -> dict[str, float]:
            monkeypatch.setattr(pg_store, "POSTINGS_PER_WORD", per_word)
            monkeypatch.setattr(pg_store, "COMPLETED_PER_SEARCH", completed)
            hits = pg.keyword_search("frobnicate page", 2, SearchFilter())
            return {pg.chunks_by_id([cid])[cid].path: score for cid, score in hits}

        full = scored(10**6, 0)
        assert next(iter(full)) == "special.py" and full["special.py"] > full.get("other.py", 0)
        assert scored(2, 0).get("special.py", 0) < full["special.py"]  # "page" not read for it
        completed = scored(2, 10)
        assert completed["special.py"] == pytest.approx(full["special.py"])
        assert next(iter(completed)) == "special.py"
    finally:
        pg.close()
        db.close()


def test_chunks_written_before_the_postings_are_found_after_the_upgrade(postgres_dsn: str) -> None:
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        before = next(n for n, sql in enumerate(MIGRATIONS) if "CREATE TABLE chunk_postings" in sql)
        assert migrate(conn, MIGRATIONS[:before]) == before
        repo = conn.execute("INSERT INTO repositories(root, name) VALUES ('/old', 'old') RETURNING id").fetchone()
        assert repo is not None
        file_id = conn.execute(
            "INSERT INTO files(repo, path, hash, size, mtime_ns, language, chunks, indexed_at) "
            "VALUES (%s, 'ledger.py', 'h', 1, 1, 'python', 1, 0) RETURNING id", (repo[0],)
        ).fetchone()  # fmt: skip
        assert file_id is not None
        conn.execute(
            "INSERT INTO chunks(repo, file_id, language, kind, start_line, end_line, content, embed_hash, terms) "
            "VALUES (%s, %s, 'python', 'function', 1, 1, 'def balance(): pass', 'e', "
            "setweight(to_tsvector('tributary_code', 'ledger py'), 'A') || "
            "setweight(to_tsvector('tributary_code', 'def balance pass'), 'D'))", (repo[0], file_id[0]),
        )  # fmt: skip
    db = Database(postgres_dsn)
    try:
        store = PgIndexStore(db, int(repo[0]))
        [(cid, score)] = store.keyword_search("ledger balance", 10, SearchFilter())
        assert store.chunks_by_id([cid])[cid].path == "ledger.py" and score > 0
    finally:
        db.close()


def test_a_task_ranks_a_likely_files_functions_among_its_own(postgres_dsn: str, tmp_path: Path) -> None:
    from tests.index.test_task_functions import capture_repo, check_in_file_order

    repo, issue = capture_repo(tmp_path)
    backend = IndexBackend(postgres_dsn)
    index_repository(repo, embedder=HashingEmbedder(), backend=backend)
    store = open_index_store(repo, backend=backend)
    try:
        check_in_file_order(store, issue)
    finally:
        store.close()


def _one_commit(checkout: Path) -> Path:
    """The service of ``make_repo`` in a git work tree, in one commit."""
    from tests.tasks.task_helpers import git

    make_repo(checkout)
    git(checkout, "init", "-q", "-b", "main")
    git(checkout, "add", "-A")
    git(checkout, "commit", "-q", "-m", "Import the service", date="2024-01-01T10:00:00+00:00")
    return checkout


def test_a_history_imported_without_vectors_gets_them_later(postgres_dsn: str, tmp_path: Path) -> None:
    """``--repo`` imports the commits' words at once; the background pass embeds them."""
    from tests.tasks.task_helpers import HashEmbedder
    from tributary.engine.tasks.api import embed_history, import_git_history, open_history

    checkout = _one_commit(tmp_path / "checkout")
    backend = IndexBackend(postgres_dsn)
    import_git_history(checkout, embed=False, backend=backend)

    def counts() -> tuple[int, int]:
        store = open_history(checkout, backend=backend, create=False)
        assert store is not None
        try:
            return store.vector_counts()
        finally:
            store.close()

    assert counts() == (0, 1)
    assert embed_history(checkout, embedder=HashEmbedder(), backend=backend) == 1
    assert counts() == (1, 1)


def test_one_embedding_pass_at_a_time_in_the_shared_index(postgres_dsn: str, tmp_path: Path) -> None:
    """Two machines' background passes over one repository of the shared index embedded
    the same chunks and commits twice: while a pass elsewhere holds the code's or the
    history's turn, this one does nothing, and says a pass is underway."""
    from tests.tasks.task_helpers import HashEmbedder
    from tributary.engine.index.manager import embed_repository
    from tributary.engine.repos.manage import embedding_underway
    from tributary.engine.tasks.api import embed_history, import_git_history

    checkout = _one_commit(tmp_path / "checkout")
    backend = IndexBackend(postgres_dsn)
    index_repository(checkout, embed=False, backend=backend)
    import_git_history(checkout, embed=False, backend=backend)
    assert not embedding_underway(checkout, backend=backend)
    code = PgIndexStore.find(postgres_dsn, str(checkout))
    history = PgTaskStore.open(postgres_dsn, str(checkout), create=False)
    assert code is not None and history is not None
    try:
        with code.collection.embedding_turn() as ours:  # another machine embeds the code
            assert ours
            assert embedding_underway(checkout, backend=backend)
            assert embed_repository(checkout, embedder=HashingEmbedder(), backend=backend).chunks_embedded == 0
        with history.collection.embedding_turn() as ours:  # and then the history
            assert ours
            assert embedding_underway(checkout, backend=backend)
            assert embed_history(checkout, embedder=HashEmbedder(), backend=backend) == 0
    finally:
        code.close()
        history.close()
    assert not embedding_underway(checkout, backend=backend)
    assert embed_repository(checkout, embedder=HashingEmbedder(), backend=backend).chunks_embedded > 0
    assert embed_history(checkout, embedder=HashEmbedder(), backend=backend) == 1
