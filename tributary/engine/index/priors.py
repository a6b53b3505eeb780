"""What kind of file a hit comes from, and how much that should weigh for a question.

Asked about the code, a search whose words match tests, docs, changelogs or a vendored
copy as well as the code fills its top ten with them: a test repeats the names it tests,
a changelog names every function that ever changed, a release tool's config says
"groups" as often as a router does, a package manifest names every feature. So each
chunk's fused score is scaled by its file's role, unless the question asks for that role
itself ("which test covers …", "docs for …", "changelog"): then nothing is scaled down
for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from pathlib import PurePosixPath

from tributary.engine.index.credentials import is_credentials_file

CODE = "code"
TEST = "test"
TEST_DATA = "test data"  # what tests read: scripts, inputs and expected outputs they run on
DOC = "doc"
EXAMPLE = "example"
VENDORED = "vendored"
GENERATED = "generated"
RECORD = "record"  # changelogs, release notes, package metadata
SUPERSEDED = "superseded"  # an older copy beside a newer one (v3/ beside v4/, legacy/)
TOOLING = "tooling"  # build, CI, release and editor configuration: Cargo.toml, .github/
TRANSLATION = "translation"  # a document's copy in another language beside its original
ASSET = "asset"  # images, fonts, source maps, keys, credentials: never indexed, but other sources find them

# How much a role keeps of its fused score when the question does not ask for it.
FACTORS: Mapping[str, float] = {
    TEST: 0.7,
    TEST_DATA: 0.7,
    DOC: 0.75,
    EXAMPLE: 0.8,
    VENDORED: 0.5,
    GENERATED: 0.5,
    RECORD: 0.5,
    SUPERSEDED: 0.7,
    TOOLING: 0.5,
    TRANSLATION: 0.3,  # below a vendored copy: the same page again, its file name and code too
    ASSET: 0.3,  # a grep finds "width" in an icon's markup, a file-name search its "click"
}

_TEST_DIRS = frozenset({"test", "tests", "testing", "__tests__", "spec", "specs", "e2e"})
# Folders of what tests run on: data wherever they lie, or inside a test folder.
_TEST_DATA_DIRS = frozenset({"testdata", "test_data", "fixtures", "__fixtures__", "__mocks__", "__snapshots__"})
_DATA_IN_TESTS = frozenset({"data", "example_scripts", "examples", "samples", "resources", "snapshots", "golden", "mocks", "cases"})
_DOC_DIRS = frozenset({"doc", "docs", "documentation", "docs_src", "site"})
_EXAMPLE_DIRS = frozenset({"example", "examples", "sample", "samples", "demo", "demos", "tutorial", "tutorials"})
_VENDORED_DIRS = frozenset({
    "vendor", "vendored", "third_party", "thirdparty", "third-party", "3rdparty", "node_modules", "external",
    "extern", "cextern", "_vendor",
})
_GENERATED_DIRS = frozenset({"generated", "gen", "__generated__"})
# Folders of CI and editor tooling. A file whose name starts with a dot (.travis.yml,
# .golangci.yml, .pre-commit-config.yaml) is tooling wherever it lies.
# A version control store's own files (.git/description, its hooks) count too: a
# file-name search of the whole tree finds them ("script" in "description").
_TOOLING_DIRS = frozenset({".github", ".gitlab", ".circleci", ".buildkite", ".ci", ".devcontainer", ".vscode", ".idea", ".husky", ".azure-pipelines",
                           ".git", ".hg", ".svn"})
# Lock files: generated, never indexed as code (``tributary.engine.index.discovery``),
# but the history's commits touch them.
LOCK_FILES = frozenset({
    "package-lock.json", "yarn.lock", "pnpm-lock.yaml", "poetry.lock", "pipfile.lock", "cargo.lock",
    "composer.lock", "gemfile.lock", "go.sum", "uv.lock", "pdm.lock", "npm-shrinkwrap.json", "bun.lockb",
    "bun.lock", "flake.lock", "deno.lock", "podfile.lock", "gradle.lockfile", "packages.lock.json", "mix.lock",
})
# Package manifests and build files: they name every feature and dependency, so their
# words match many questions about the code they build.
_BUILD_FILES = frozenset({
    "cargo.toml", "package.json", "pyproject.toml", "setup.cfg", "tox.ini", "go.mod", "build.gradle",
    "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "pom.xml", "gemfile", "mix.exs",
    "composer.json", "cmakelists.txt", "makefile", "tsconfig.json", "pipfile",
}) | LOCK_FILES
_TEST_NAME = re.compile(
    r"(^test_.*|.*_test|.*_tests|.*\.test|.*\.spec|.*_spec|.*Tests?|.*Spec|^conftest)$"
)
_GENERATED_NAME = re.compile(r"(.*_pb2(_grpc)?|.*\.pb|.*\.generated|.*\.g|.*\.min|.*_generated)$")
_RECORD_NAME = re.compile(
    # (an archived part counts too: fmt's ``ChangeLog-old.md``, ``CHANGES-1.x.rst``)
    r"^(changelog|changes|history|news|releases?|release[-_]notes|pkg-info|authors|contributors)"
    r"([-_.](old|legacy|archived?|v?\d[\w.]{0,20}))?$",
    re.IGNORECASE,
)
_PROSE = frozenset({"markdown", "rst", "text"})
# Pages in a docs folder are what a generator built from the code's own comments (an API
# reference checked in), not what someone wrote.
_BUILT_PAGES = frozenset({".html", ".htm"})
_RECORD_SUFFIXES = frozenset({"", ".md", ".rst", ".txt", ".markdown"})
# Folders of changelog fragments, one file a change (towncrier's ``changelog/123.bugfix.rst``,
# ``newsfragments/``, ``changes/``): the release notes before they are compiled.
_RECORD_DIRS = frozenset({"changelog", "changelog.d", "changes", "changes.d", "newsfragments", "news", "release-notes", "releasenotes"})
# A fragment named by its change and its kind alone, as towncrier allows (``456.bugfix``,
# ``+a1b2.feature``): no suffix says it is prose.
_FRAGMENT_NAME = re.compile(
    r"^[\w+-]{1,80}\.(feature|bugfix|fix|doc|docs|removal|deprecation|breaking|misc|trivial|improvement"
    r"|vendor|packaging|contrib|security|added|changed|fixed|removed)(\.\d{1,3})?$"
)

# Words by which a question asks for a role itself.
_ASKS = {
    TEST: re.compile(r"\b(tests?|testing|tested|spec|specs|fixtures?|mocks?|assert\w*|e2e|unit ?tests?)\b", re.I),
    DOC: re.compile(r"\b(docs?|documentation|documented|readme|guide|tutorial|docstrings?)\b", re.I),
    EXAMPLE: re.compile(r"\b(examples?|samples?|demos?|tutorials?|usage)\b", re.I),
    VENDORED: re.compile(r"\b(vendor\w*|third[ -_]?party)\b", re.I),
    GENERATED: re.compile(r"\b(generated|protobuf|codegen)\b", re.I),
    RECORD: re.compile(r"\b(changelog|changes|release notes?|history|news|version(s|ed)?)\b", re.I),
    SUPERSEDED: re.compile(r"\b(legacy|deprecated|old|older|v\d+|version \d+)\b", re.I),
    # Words that name code as often as tooling ("controller actions", "dependency
    # injection", "root config", "plug pipeline", "namespace packages") ask for it only
    # as a tooling phrase ("build scripts", "config files", "dependency updates").
    TOOLING: re.compile(
        r"\b(ci|continuous integration|workflows?|github|gitlab|releas\w*|lint\w*|pre-commit|"
        r"deploy\w*|devcontainer|editorconfig|manifest|cargo|npm|gradle|maven|makefile|cmake|"
        r"install\w*|packaging|dockerfile|tox|pyproject|setup\.(py|cfg)|"
        r"(build|ci|release) (system|scripts?|steps?|files?|config\w*|matrix|pipelines?)|"
        r"(config|configuration|settings|editor) files?|"
        r"dependenc(y|ies) (updates?|bumps?|pins?|versions?|upgrades?)|pip-compile\w*|requirements files?|"
        r"(updat|bump|upgrad|pin)\w* (the |all |dev )?dependenc\w*|(which|what) (\w+ )?dependencies|"
        r"dependencies .{0,30}\bpin\w*|"
        r"(package|packages) (metadata|manifests?|versions?|releases?|builds?))\b",
        re.I,
    ),
    TRANSLATION: re.compile(r"\b(translat\w*|i18n|l10n|locali[sz]\w*|locales?|languages?)\b", re.I),
    ASSET: re.compile(r"\b(icons?|logos?|images?|svgs?|png|pictures?|fonts?|assets?|favicons?|"
                      r"source ?maps?|static files?)\b", re.I),
}
_VERSION_DIR = re.compile(r"^v(\d{1,3})$")
# A letter of a script other than Latin (Greek, Cyrillic, CJK, Arabic, …).
_NOT_LATIN = re.compile(r"[^\W\d_\u0000-\u024f\u1e00-\u1eff]")
_SUPERSEDED_DIRS = frozenset({"legacy", "deprecated", "old", "obsolete"})
_ASSET_SUFFIXES = frozenset({
    ".svg", ".png", ".jpg", ".jpeg", ".gif", ".ico", ".icns", ".webp", ".bmp", ".tif", ".tiff",
    ".woff", ".woff2", ".ttf", ".otf", ".eot", ".map", ".pdf", ".mp3", ".mp4", ".wav", ".ogg",
    ".enc", ".gpg", ".pgp", ".p12", ".pfx", ".jks", ".der", ".crt", ".cer", ".pem", ".key",  # keys, ciphertext
})


# The order a new index's chunks get their vectors in, by their file's role: meaning-based
# search covers the embedded share while the rest waits, so the code questions are most
# often about goes first; tests next, then translations, vendored, generated and
# tooling files, which a question in English rarely wants.
EMBED_ORDER: dict[str, int] = {CODE: 0, DOC: 1, EXAMPLE: 1, TEST: 2, TEST_DATA: 2, SUPERSEDED: 2}
EMBED_LAST = 3


def embed_order(role: str) -> int:
    """Where chunks of a file in ``role`` come in the embedding queue (lower: sooner)."""
    return EMBED_ORDER.get(role, EMBED_LAST)


@cache
def role_of(path: str, language: str | None = None) -> str:
    """The role of the file at ``path`` (repository-relative, posix)."""
    pure = PurePosixPath(path.lower())
    folders = set(pure.parts[:-1])
    stem = PurePosixPath(path).stem  # case kept: ``FooTest``, ``BarSpec``
    if folders & _VENDORED_DIRS:
        return VENDORED
    if pure.suffix in _ASSET_SUFFIXES or is_credentials_file(pure.name):
        return ASSET
    if folders & _GENERATED_DIRS or _GENERATED_NAME.match(pure.stem):
        return GENERATED
    if pure.suffix in _BUILT_PAGES and folders & _DOC_DIRS:  # Dokka's, Javadoc's, Sphinx's output
        return GENERATED
    if (_RECORD_NAME.match(pure.stem) or folders & _RECORD_DIRS) and pure.suffix in _RECORD_SUFFIXES:
        return RECORD
    if folders & _RECORD_DIRS and _FRAGMENT_NAME.match(pure.name):  # ``changes/456.bugfix``
        return RECORD
    if folders & _TOOLING_DIRS or pure.name in _BUILD_FILES or pure.name.startswith("."):
        return TOOLING
    if folders & _TEST_DATA_DIRS or (folders & _TEST_DIRS and folders & _DATA_IN_TESTS):
        return TEST_DATA
    if folders & _TEST_DIRS or _TEST_NAME.match(stem):
        return TEST
    prose = language in _PROSE if language else pure.suffix in {".md", ".rst", ".txt"}
    if folders & _EXAMPLE_DIRS and not (prose and folders & _DOC_DIRS):  # docs/tutorial/*.md: pages
        return EXAMPLE
    if folders & _DOC_DIRS or prose:
        return DOC
    return CODE


def role_among(
    path: str, language: str | None = None, *, older: frozenset[str] = frozenset(), copies: frozenset[str] = frozenset()
) -> str:
    """The role of ``path`` among the paths it was found with: an older copy of a newer
    one (``older``, from :func:`superseded`) or a translation (``copies``, from
    :func:`translated`) before the role its path alone gives."""
    if path in older:
        return SUPERSEDED
    return TRANSLATION if path in copies else role_of(path, language)


def asked_roles(query: str) -> frozenset[str]:
    """The roles ``query`` asks for by name ("the tests of …", "docs on …"); asking for
    tests asks for what they run on too."""
    roles = frozenset(role for role, words in _ASKS.items() if words.search(query))
    if TEST in roles:
        roles |= {TEST_DATA}
    if _NOT_LATIN.search(query):  # asked in another script: its translations are the answer
        roles |= {TRANSLATION}
    return roles


# For an issue-length task the answer is the code that must change: the tests that repeat
# its names, the docs and changelog that describe it, rank well below it.
TASK_FACTORS: Mapping[str, float] = {
    TEST: 0.7,
    TEST_DATA: 0.4,
    DOC: 0.4,
    EXAMPLE: 0.4,
    VENDORED: 0.3,
    GENERATED: 0.3,
    RECORD: 0.2,
    SUPERSEDED: 0.5,
    TOOLING: 0.2,
    TRANSLATION: 0.2,
    ASSET: 0.2,
}


def factor(role: str, asked: frozenset[str], *, task: bool = False) -> float:
    """What a chunk of a file in ``role`` keeps of its score for a question asking ``asked``
    (``task``: an issue-length task, see ``task_asked_roles``)."""
    if role == CODE or role in asked:
        return 1.0
    return (TASK_FACTORS if task else FACTORS).get(role, 1.0)


def task_asked_roles(title: str) -> frozenset[str]:
    """The roles an issue asks for, read from its title alone (its body quotes tests,
    docs and changelogs on the way). Tests are never what a task asks to change: an
    issue about a failing test is about the code under it."""
    return asked_roles(title) - {TEST, TEST_DATA}


def superseded(paths: Iterable[str], exists: Callable[[str], bool] | None = None) -> frozenset[str]:
    """The paths that lie in an older copy of a folder found beside a newer one among
    ``paths``: ``src/v3/…`` when ``src/v4/…`` is there too, a ``legacy/`` folder, or a
    versioned copy kept inside the live package (``pydantic/v1/main.py`` when
    ``pydantic/main.py`` is among ``paths``, or ``exists`` says the index holds it).

    The newest of several versions is the live code even where the package's own folder
    has a file of the same name: zod's ``src/index.ts`` only re-exports ``src/v4/``."""
    listed = list(paths)
    present = frozenset(listed)
    newest: dict[str, int] = {}
    oldest: dict[str, int] = {}
    versioned: list[tuple[str, str, int, str, str]] = []
    old: set[str] = set()
    for path in listed:
        names = path.split("/")
        parts = names[:-1]
        if any(part.lower() in _SUPERSEDED_DIRS for part in parts):
            old.add(path)
            continue
        for depth, part in enumerate(parts):
            match = _VERSION_DIR.match(part.lower())
            if match:
                prefix, number = "/".join(parts[:depth]), int(match[1])
                live = "/".join([*parts[:depth], *names[depth + 1 :]])
                older = "/".join([*parts[:depth], f"{part[0]}{number - 1}", *names[depth + 1 :]])
                versioned.append((path, prefix, number, live, older))
                newest[prefix] = max(newest.get(prefix, number), number)
                oldest[prefix] = min(oldest.get(prefix, number), number)
                break

    def held(path: str) -> bool:
        return path in present or (exists is not None and exists(path))

    for path, prefix, number, live, older in versioned:
        if number < newest[prefix]:
            old.add(path)
        elif oldest[prefix] == number and number > 0 and not held(older) and held(live):
            old.add(path)  # the only version here, beside the live package's own file
    return frozenset(old)


# ISO 639-1 language codes, as folders and file suffixes name a translation's language.
_LANGUAGES = frozenset(
    "aa ab af ak am an ar as av ay az ba be bg bh bi bm bn bo br bs ca ce ch co cr cs cu cv cy da de dv dz "  # noqa: SIM905
    "ee el en eo es et eu fa ff fi fj fo fr fy ga gd gl gn gu gv ha he hi ho hr ht hu hy hz ia id ie ig ii "
    "ik io is it iu ja jv ka kg ki kj kk kl km kn ko kr ks ku kv kw ky la lb lg li ln lo lt lu lv mg mh mi "
    "mk ml mn mr ms mt my na nb nd ne ng nl nn no nr nv ny oc oj om or os pa pi pl ps pt qu rm rn ro ru rw "
    "sa sc sd se sg si sk sl sm sn so sq sr ss st su sv sw ta te tg th ti tk tl tn to tr ts tt tw ty ug uk "
    "ur uz ve vi vo wa wo xh yi yo za zh zu".split()
)
# A language, with a region or script after it: ``pt-BR``, ``zh_Hant``, ``en-us``.
_LOCALE = re.compile(r"^([a-z]{2})(?:[-_]([a-z]{2}|[a-z]{4}|\d{3}))?$", re.IGNORECASE)
_ORIGINALS = ("en", "en-us", "en_us", "en-gb", "en_gb")
_PROSE_SUFFIXES = frozenset({".md", ".mdx", ".rst", ".txt", ".adoc", ".html", ".markdown", ".ipynb"})


def _language(name: str) -> str | None:
    """The language ``name`` is the code of (``pt_BR`` → ``pt``), or None."""
    match = _LOCALE.match(name)
    language = match[1].lower() if match else None
    return language if language in _LANGUAGES else None


def _originals(path: str) -> list[tuple[str, str]]:
    """Where the original of ``path`` would be if ``path`` were a translation, each with
    the English folder or file that must be known for it to be looked up:
    ``docs/es/a.md`` → ``docs/en/a.md`` (``docs/en``), ``README.zh-CN.md`` → ``README.md``,
    ``locales/fr.ts`` → ``locales/en.ts`` (those two: themselves)."""
    names = path.split("/")
    found: list[tuple[str, str]] = []
    for depth, part in enumerate(names[:-1]):
        if _language(part) not in (None, "en"):
            found += [("/".join([*names[:depth], original, *names[depth + 1 :]]), "/".join([*names[:depth], original]))
                      for original in _ORIGINALS]  # fmt: skip
    name = PurePosixPath(names[-1])
    stem, dot, tag = name.stem.rpartition(".")
    if name.suffix.lower() in _PROSE_SUFFIXES and dot and stem and _language(tag) not in (None, "en"):
        original = "/".join([*names[:-1], stem + name.suffix])
        found.append((original, original))
    if _language(name.stem) not in (None, "en"):  # a locale's messages: locales/fr.ts beside en.ts
        found += [(held, held) for held in ("/".join([*names[:-1], o + name.suffix]) for o in _ORIGINALS)]
    return found


def translated(
    paths: Iterable[str], exists: Callable[[str], bool] | None = None, *, cheap: bool = False
) -> frozenset[str]:
    """The paths among ``paths`` that are translations of a document held in English:
    ``docs/es/docs/tutorial.md`` when ``docs/en/docs/tutorial.md`` is among ``paths`` or
    ``exists`` says the index holds it; ``README.zh-CN.md`` beside ``README.md``; a
    locale's messages (``locales/fr-CA.ts``) beside the English ones (``locales/en.ts``). A
    folder that merely has a language code's name (``src/io/``, ``docs/io/``) is never
    one: only an English folder's copy of the same path makes it one.

    A project's docs translated into ten languages repeat the English page's code and
    names ten times, so a question in English met its translations first.

    ``exists`` is asked only below an English folder one of ``paths`` is in (a package's
    ``io/`` folder costs no lookups), unless it is ``cheap`` (a set's membership)."""
    listed = list(paths)
    present = frozenset(listed)
    # The folders of ``paths``, read only when the index is to be asked by them.
    known: frozenset[str] = frozenset()
    if exists is not None and not cheap:
        known = frozenset(path.rsplit("/", depth)[0] for path in listed for depth in range(1, path.count("/") + 1))

    def held(original: str, anchor: str) -> bool:
        if original in present:
            return True
        return exists is not None and (cheap or anchor in known) and exists(original)

    return frozenset(path for path in listed if any(held(*pair) for pair in _originals(path)))
