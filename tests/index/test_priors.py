"""File roles: tests, docs, examples, vendored and generated copies rank below the code
unless the question asks for them."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.index.index_helpers import HashingEmbedder
from tributary.engine.index import priors
from tributary.engine.index.manager import index_path_for, index_repository
from tributary.engine.index.search import hybrid_search
from tributary.engine.index.store import SqliteStore


@pytest.mark.parametrize(
    ("path", "role"),
    [
        ("src/router.py", priors.CODE),
        ("tests/test_router.py", priors.TEST),
        ("pkg/router_test.go", priors.TEST),
        ("src/router.spec.ts", priors.TEST),
        ("core/src/test/kotlin/RouterTest.kt", priors.TEST),
        ("lib/router_spec.rb", priors.TEST),
        ("conftest.py", priors.TEST),
        ("testing/example_scripts/collect/pkg/test_foo.py", priors.TEST_DATA),
        ("astropy/io/ascii/tests/data/cds.dat", priors.TEST_DATA),
        ("pkg/parser/testdata/input.go", priors.TEST_DATA),
        ("cypress/fixtures/user.json", priors.TEST_DATA),
        ("src/data/loader.py", priors.CODE),  # a data folder outside the tests is code
        ("docs/routing.md", priors.DOC),
        ("README.md", priors.DOC),
        ("docs_src/tutorial/app.py", priors.EXAMPLE),
        ("docs/en/docs/tutorial/dependencies/index.md", priors.DOC),  # a page of the docs' tutorial
        ("examples/chat/README.md", priors.EXAMPLE),  # outside the docs: the example's own
        ("examples/basic/main.go", priors.EXAMPLE),
        ("vendor/github.com/x/y.go", priors.VENDORED),
        ("cextern/wcslib/C/wcs.c", priors.VENDORED),  # a C library kept beside the package
        ("3rdparty/zlib/inflate.c", priors.VENDORED),
        ("api/v1/service_pb2.py", priors.GENERATED),
        ("docs/api/exposed-core/index.html", priors.GENERATED),  # an API reference built from the code
        ("examples/ejs/views/footer.html", priors.EXAMPLE),
        ("CHANGES.md", priors.RECORD),
        ("CHANGELOG", priors.RECORD),
        ("doc/ChangeLog-old.md", priors.RECORD),  # an archived part of it
        ("CHANGES-1.x.rst", priors.RECORD),
        ("docs/releases-api.md", priors.DOC),
        ("history_utils.py", priors.CODE),
        ("changelog/7168.bugfix.rst", priors.RECORD),  # a towncrier fragment: a changelog entry
        ("newsfragments/12.feature.md", priors.RECORD),
        ("changes/456.bugfix", priors.RECORD),  # a fragment with no suffix, as towncrier allows
        ("changelog.d/+a1b2.feature.1", priors.RECORD),
        ("changes/README.bugfix.py", priors.CODE),
        ("src/changes/diff.py", priors.CODE),  # code in a folder named like one stays code
        ("src/history.py", priors.CODE),  # a module named like a record file is code
        ("src/contest.py", priors.CODE),
        ("src/attestation.go", priors.CODE),
        (".goreleaser.yaml", priors.TOOLING),
        (".github/workflows/ci.yml", priors.TOOLING),
        (".git/description", priors.TOOLING),
        (".hg/hgrc", priors.TOOLING),
        (".github/ISSUE_TEMPLATE/bug.md", priors.TOOLING),
        ("web/.eslintrc.js", priors.TOOLING),
        ("app/.env", priors.ASSET),  # holds credentials: never indexed, only a commit's path
        ("app/.env.example", priors.TOOLING),  # its template, a dotfile like .eslintrc
        ("src/config.yaml", priors.CODE),
        ("serde_core/Cargo.toml", priors.TOOLING),
        ("package.json", priors.TOOLING),
        ("uv.lock", priors.TOOLING),  # a lock file names every dependency and version
        ("poetry.lock", priors.TOOLING),
        ("setup.py", priors.CODE),
        ("docs/_static/click-icon.svg", priors.ASSET),  # a grep's or a file-name search's find
        ("web/public/Logo.PNG", priors.ASSET),
        ("dist/app.js.map", priors.ASSET),
        ("src/images.py", priors.CODE),
        ("github_deploy_key.enc", priors.ASSET),  # ciphertext a commit touched, never code
        ("tests/certs/server.pem", priors.ASSET),
    ],
)
def test_roles_by_path(path: str, role: str) -> None:
    assert priors.role_of(path) == role


def test_a_question_that_names_a_role_keeps_it_whole() -> None:
    code_question = priors.asked_roles("how are routes registered")
    assert priors.factor(priors.TEST, code_question) < 1.0
    assert priors.factor(priors.CODE, code_question) == 1.0
    test_question = priors.asked_roles("which tests cover route registration")
    assert priors.factor(priors.TEST, test_question) == 1.0
    assert priors.factor(priors.TEST_DATA, test_question) == 1.0
    assert priors.factor(priors.TEST_DATA, code_question) == priors.factor(priors.TEST, code_question)
    assert priors.factor(priors.DOC, priors.asked_roles("docs for the router")) == 1.0
    assert priors.factor(priors.RECORD, priors.asked_roles("changelog of the router")) == 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("how middleware is applied to route groups")) < 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("which CI workflow runs the linter")) == 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("how is a release built")) == 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("which dependencies does the package pin")) == 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("update dependencies using pip-compile")) == 1.0
    assert priors.factor(priors.TOOLING, priors.asked_roles("where are config files read")) == 1.0
    assert priors.factor(priors.ASSET, priors.asked_roles("how does click decide the terminal width")) < 1.0
    assert priors.factor(priors.ASSET, priors.asked_roles("where is the app's icon drawn")) == 1.0


@pytest.mark.parametrize(
    "question",
    [
        "controller actions and request handling helpers",
        "how does dependency injection work",
        "how tRPC is initialized with root config and context factory",
        "endpoint and plug pipeline configuration",
        "Refine how we detect namespace packages",
        "Pytest crashes the interpreter on debug build for 3.8+",
    ],
)
def test_words_that_name_code_as_often_as_tooling_do_not_ask_for_it(question: str) -> None:
    """"actions", "dependency", "config", "pipeline", "packages" and "build" mean code
    here: CI files and build configuration keep their lower rank."""
    assert priors.TOOLING not in priors.asked_roles(question)


def test_a_task_ranks_what_tests_run_on_below_the_tests() -> None:
    asked = priors.task_asked_roles("Collection fails for a package given as an argument")
    assert priors.factor(priors.TEST_DATA, asked, task=True) < priors.factor(priors.TEST, asked, task=True) < 1.0
    failing = priors.task_asked_roles("test_foo fails with fixtures in a package")
    assert priors.factor(priors.TEST_DATA, failing, task=True) < 1.0  # still about the code under them


def test_the_code_outranks_its_test_and_docs_until_they_are_asked_for(tmp_path: Path) -> None:
    repo = tmp_path / "app"
    (repo / "app").mkdir(parents=True)
    (repo / "tests").mkdir()
    (repo / "docs").mkdir()
    (repo / "app" / "routing.py").write_text(
        "def register_route(path, handler):\n    \"\"\"Register a route handler.\"\"\"\n    ROUTES[path] = handler\n",
        encoding="utf-8",
    )
    (repo / "tests" / "test_routing.py").write_text(
        "def test_register_route():\n    register_route('/a', handler)\n    register_route('/b', handler)\n"
        "    assert register_route and route handler registered\n",
        encoding="utf-8",
    )
    (repo / "docs" / "routing.md").write_text(
        "# Register route\n\nCall register_route to register a route handler for a route.\n", encoding="utf-8"
    )
    with _indexed(repo, tmp_path, top_k=3) as (store, ranked):
        assert ranked("register route handler")[0] == "app/routing.py"
        assert ranked("tests of register route handler")[0] == "tests/test_routing.py"
        hits = hybrid_search(store, "register route handler", None, repo="app", top_k=3)
        test_hit = next(hit for hit in hits if hit.path == "tests/test_routing.py")
        assert test_hit.role == priors.TEST and test_hit.fused is not None and test_hit.score < test_hit.fused


@contextlib.contextmanager
def _indexed(repo: Path, tmp_path: Path, top_k: int) -> Iterator[tuple[SqliteStore, Callable[[str], list[str]]]]:
    """``repo`` indexed with a hashing embedder: its store, and the paths a query ranks."""
    embedder = HashingEmbedder()
    index_repository(repo, embedder=embedder, index_dir=tmp_path / "idx")
    store = SqliteStore(index_path_for(repo, directory=tmp_path / "idx"), readonly=True)

    def ranked(query: str) -> list[str]:
        hits = hybrid_search(store, query, embedder.encode([query])[0], repo=repo.name, top_k=top_k)
        return [hit.path for hit in hits]

    try:
        yield store, ranked
    finally:
        store.close()


def test_an_older_copy_beside_a_newer_one_is_superseded() -> None:
    paths = ["src/v3/types.ts", "src/v4/core/types.ts", "src/index.ts", "lib/legacy/router.py",
             "pkg/v2/a.go", "other/v1/b.go"]
    assert priors.superseded(paths) == {"src/v3/types.ts", "lib/legacy/router.py"}
    assert priors.factor(priors.SUPERSEDED, priors.asked_roles("zod v3 string schema")) == 1.0
    assert priors.factor(priors.SUPERSEDED, priors.asked_roles("string schema")) < 1.0


def test_a_file_keeps_two_chunks_at_full_score_then_yields() -> None:
    from tributary.engine.index.search import REPEAT_FACTOR, SearchHit, spread_files

    def hit(path: str, score: float) -> SearchHit:
        return SearchHit(path, "r", 1, 2, None, "block", "python", score, "x")

    spread = spread_files([hit("a.py", 1.0), hit("a.py", 0.9), hit("a.py", 0.8), hit("b.py", 0.5)])
    assert [(h.path, h.score) for h in spread] == [
        ("a.py", 1.0), ("a.py", 0.9), ("b.py", 0.5), ("a.py", round(0.8 * REPEAT_FACTOR, 6))
    ]


def test_a_file_with_many_matching_chunks_leaves_room_for_the_others() -> None:
    """Seventy sections of a changelog match a docs question better than any code: past
    a few, they rank below every other file's first chunk that scores a tenth as well."""
    from tributary.engine.index.search import SearchHit, spread_files

    def hit(path: str, score: float) -> SearchHit:
        return SearchHit(path, "r", 1, 2, None, "block", "markdown", score, "x")

    changelog = [hit("CHANGELOG.md", 1.0 - i / 1000) for i in range(70)]
    others = [hit(f"pkg/m{i}.go", 0.2 - i / 1000) for i in range(40)]
    top = spread_files(changelog + others)[:100]
    assert {h.path for h in top} >= {h.path for h in others}  # all forty files make the cut
    assert [h.path for h in top[:2]] == ["CHANGELOG.md", "CHANGELOG.md"]
    assert [h.score for h in top] == sorted((h.score for h in top), reverse=True)


def test_tests_and_docs_past_the_first_two_rank_below_the_code() -> None:
    """Eight test files and docs each match a question's words a little better than the
    code: the first two of them stay above it, the rest go below it, in their order;
    asked for by name, they are not scaled."""
    from tributary.engine.index.search import ROLE_CROWD_FACTOR, ROLE_LIMIT, SearchHit, crowd_roles

    def hit(path: str, score: float, role: str) -> SearchHit:
        return SearchHit(path, "r", 1, 2, None, "block", "python", score, "x", role=role)

    others = [hit(f"tests/test_{i}.py", 0.9 - i / 100, priors.TEST) for i in range(6)]
    others += [hit("docs/a.md", 0.8, priors.DOC), hit("docs/b.md", 0.79, priors.DOC)]
    code = [hit("app/routing.py", 0.6, priors.CODE), hit("app/views.py", 0.5, priors.CODE)]
    crowded = crowd_roles(others + code, frozenset())
    assert [h.path for h in crowded[: ROLE_LIMIT + 2]] == [
        "tests/test_0.py", "tests/test_1.py", "app/routing.py", "app/views.py"
    ]
    assert crowded[ROLE_LIMIT + 2].score == round(0.88 * ROLE_CROWD_FACTOR, 6)
    assert [h.score for h in crowded] == sorted((h.score for h in crowded), reverse=True)
    asked = priors.asked_roles("which tests cover routing")
    assert [h.path for h in crowd_roles(others + code, asked)][:6] == [h.path for h in others[:6]]


def test_a_versioned_copy_inside_the_live_package_is_superseded() -> None:
    paths = ["pydantic/main.py", "pydantic/v1/main.py", "pydantic/v1/only_here.py", "api/v1/users.py"]
    assert priors.superseded(paths) == {"pydantic/v1/main.py"}
    # The live file need not be a candidate itself: the index says it is there.
    assert priors.superseded(["pydantic/v1/fields.py"], exists={"pydantic/fields.py"}.__contains__) == {
        "pydantic/v1/fields.py"
    }


def test_the_newest_of_several_versions_is_live_beside_a_re_exporting_file() -> None:
    """zod keeps ``src/v3/`` and ``src/v4/`` side by side, and ``src/index.ts`` only
    re-exports v4: v4 is the live code, v3 the superseded copy."""
    paths = ["src/index.ts", "src/v4/index.ts", "src/v3/index.ts", "src/v4/classic/schemas.ts"]
    assert priors.superseded(paths) == {"src/v3/index.ts"}
    # v3 need not be among the candidates: the index says v4 has an older version.
    held = {"src/index.ts", "src/v3/index.ts", "src/locales/en.ts", "src/v3/locales/en.ts"}.__contains__
    assert priors.superseded(["src/v4/index.ts", "src/v4/locales/en.ts"], exists=held) == frozenset()


def test_a_document_translated_beside_its_english_original_is_a_translation() -> None:
    paths = [
        "docs/en/docs/tutorial/yield.md", "docs/es/docs/tutorial/yield.md", "docs/zh-hant/docs/tutorial/yield.md",
        "docs/pt_BR/docs/tutorial/yield.md", "README.md", "README.zh-CN.md", "guide/io/index.md", "guide/index.md",
        "src/io/utils.py", "src/utils.py", "docs/es/docs/only-in-spanish.md", "locale/fr/LC_MESSAGES/app.po",
    ]  # fmt: skip
    assert priors.translated(paths) == {
        "docs/es/docs/tutorial/yield.md", "docs/zh-hant/docs/tutorial/yield.md", "docs/pt_BR/docs/tutorial/yield.md",
        "README.zh-CN.md",
    }  # fmt: skip
    # The original need not be a candidate itself: the index says it is there, asked only
    # below an English folder some candidate is in.
    held = {"locale/en/LC_MESSAGES/app.po"}.__contains__
    candidates = ["locale/fr/LC_MESSAGES/app.po", "locale/en/LC_MESSAGES/other.po"]
    assert priors.translated(candidates, exists=held) == {"locale/fr/LC_MESSAGES/app.po"}
    asked: list[str] = []

    def anything(path: str) -> bool:
        asked.append(path)
        return True

    assert priors.translated(["astropy/io/fits/card.py"], exists=anything) == frozenset()
    assert asked == []  # a package's io/ beside no en/ costs the index no lookups
    # A locale's messages beside the English ones.
    locales = ["src/locales/en.ts", "src/locales/fr-CA.ts", "src/locales/ja.ts", "src/locales/index.ts"]
    assert priors.translated(locales) == {"src/locales/fr-CA.ts", "src/locales/ja.ts"}
    # A folder named like a language holds code, not a translation, when nothing English mirrors it.
    assert priors.translated(["src/io/utils.py", "src/it/runner.py", "jquery.min.js", "jquery.js"]) == frozenset()


def test_a_translation_counts_when_the_question_is_asked_in_its_script_or_about_translations() -> None:
    assert priors.factor(priors.TRANSLATION, priors.asked_roles("how are dependencies with yield cleaned up")) < 1.0
    assert priors.factor(priors.TRANSLATION, priors.asked_roles("依赖项 yield 如何清理")) == 1.0
    assert priors.factor(priors.TRANSLATION, priors.asked_roles("зависимости с yield")) == 1.0
    assert priors.factor(priors.TRANSLATION, priors.asked_roles("which pages lack a translation")) == 1.0
    assert priors.factor(priors.TRANSLATION, priors.asked_roles("dépendances avec yield")) < 1.0  # Latin script


def test_the_english_page_outranks_its_translations(tmp_path: Path) -> None:
    repo = tmp_path / "site"
    page = (
        "# Dependencies with yield\n\nA dependency with `yield` runs its exit code after the response is sent.\n"
        "Use `yield` in the dependency, then close the session.\n"
    )
    translations = {
        "es": "# Dependencias con yield\n\nUna dependencia con `yield` `yield` ejecuta el código de salida.\n",
        "zh": "# 使用 yield 的依赖项\n\n依赖项 `yield` `yield` 之后的代码在 response 之后运行。\n",
        "fr": "# Dépendances avec yield\n\nUne dépendance avec `yield` `yield` exécute le code de sortie.\n",
    }
    for language, text in {"en": page, **translations}.items():
        (repo / "docs" / language).mkdir(parents=True)
        (repo / "docs" / language / "dependencies-with-yield.md").write_text(text, encoding="utf-8")
    with _indexed(repo, tmp_path, top_k=4) as (store, ranked):
        assert ranked("dependencies with yield")[0] == "docs/en/dependencies-with-yield.md"
        hits = hybrid_search(store, "yield dependency", None, repo="site", top_k=4)
        assert {hit.path: hit.role for hit in hits}["docs/zh/dependencies-with-yield.md"] == priors.TRANSLATION
        assert ranked("依赖项 yield")[0] == "docs/zh/dependencies-with-yield.md"
