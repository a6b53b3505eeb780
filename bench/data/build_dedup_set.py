"""Build ``dedup_labelled.jsonl``: a labelled set of real duplicates and hard negatives.

Run from the repository root with the project's venv; the output is committed so the
benchmark does not depend on which package versions happen to be installed.

Every item is a hit (source, content, optional path/lines/uri) with ``cluster`` (items
sharing a cluster are true duplicates) and ``kind`` (what made it):

* ``reformatted``  a real function and a copy another server reformatted (re-indented,
                   tabs, blank lines dropped, trailing spaces, comments stripped);
* ``exact``        the same chunk from two servers;
* ``two_servers``  one README section (from installed packages' METADATA) as Markdown
                   from one server and as de-marked-up, re-flowed text from another;
* ``overlap``      two windows of one file whose line ranges overlap (25-75 %);
* ``edited``       a copy with an identifier renamed and a comment line added;
* ``hard_negative`` distinct functions mined for high surface similarity to another
                   function in the set, and adjacent (non-overlapping) windows of a file.
"""

from __future__ import annotations

import ast
import json
import random
import re
import site
from collections import defaultdict
from pathlib import Path

from rapidfuzz import process
from rapidfuzz.distance import Levenshtein

OUT = Path(__file__).with_name("dedup_labelled.jsonl")
PACKAGES = ["_pytest", "click", "pluggy", "jinja2", "rich", "anyio", "yaml", "markdown_it", "hypothesis"]
META = ["click", "pluggy", "jinja2", "rich", "httpx2", "anyio", "hypothesis", "pytest", "rapidfuzz", "pydantic",
        "numpy", "scipy", "watchfiles", "platformdirs", "pathspec", "tokenizers", "redis", "qasync", "psutil"]


def root() -> Path:
    for entry in site.getsitepackages():
        if (Path(entry) / "_pytest").is_dir():
            return Path(entry)
    raise SystemExit("site-packages with _pytest not found")


def functions(base: Path, rng: random.Random) -> list[dict]:
    out = []
    for package in PACKAGES:
        for path in sorted((base / package).rglob("*.py")):
            text = path.read_text("utf-8", errors="replace")
            try:
                tree = ast.parse(text)
            except SyntaxError:
                continue
            lines = text.split("\n")
            for node in ast.walk(tree):
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno:
                    start = (node.decorator_list[0].lineno if node.decorator_list else node.lineno)
                    size = node.end_lineno - start + 1
                    if 8 <= size <= 50:
                        out.append({"path": str(path.relative_to(base)), "start": start, "end": node.end_lineno,
                                    "content": "\n".join(lines[start - 1 : node.end_lineno]), "name": node.name})
    rng.shuffle(out)
    return out


def reformat(text: str, how: int) -> str:
    lines = text.split("\n")
    if how == 0:
        return "\n".join(re.sub(r"^( {4})+", lambda m: "  " * (len(m.group(0)) // 4), line) for line in lines)
    if how == 1:
        return "\n".join(re.sub(r"^( {4})+", lambda m: "\t" * (len(m.group(0)) // 4), line) for line in lines)
    if how == 2:
        return "\n".join(line for line in lines if line.strip())
    if how == 3:
        return "\n".join(line + "   " for line in lines)
    return "\n".join(re.sub(r"\s+#.*$", "", line) for line in lines if not line.strip().startswith("#"))


def edit(text: str, rng: random.Random) -> str:
    names = sorted(set(re.findall(r"\b[a-z_][a-z0-9_]{3,}\b", text)) - {"self", "return", "def", "None"})
    if names:
        old = rng.choice(names)
        text = re.sub(rf"\b{old}\b", old + "_v2", text)
    lines = text.split("\n")
    lines.insert(min(len(lines), 1 + rng.randrange(3)), "    # keep in sync with the upstream copy")
    return "\n".join(lines)


def demarkup(text: str) -> str:
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"^#+\s*", "", text, flags=re.M)
    text = re.sub(r"[*_`]{1,3}([^*_`\n]+)[*_`]{1,3}", r"\1", text)
    paragraphs = [" ".join(p.split()) for p in re.split(r"\n\s*\n", text) if p.strip()]
    return "\n\n".join(paragraphs)


def readme_sections(base: Path) -> list[tuple[str, str]]:
    out = []
    for name in META:
        meta = next(iter(sorted(base.glob(f"{name}-*.dist-info/METADATA"))), None)
        if meta is None:
            continue
        body = meta.read_text("utf-8", errors="replace").split("\n\n", 1)[-1]
        blocks = [b for b in re.split(r"\n(?=#{1,3} )", body) if 300 <= len(b) <= 3000]
        out.extend((name, b.strip()) for b in blocks[:3])
    return out


def main() -> None:
    rng = random.Random(20261122)
    base = root()
    items: list[dict] = []
    cluster = 0

    occupied: dict[str, list[tuple[int, int]]] = defaultdict(list)

    def free(path: str, start: int, end: int) -> bool:
        """Whether lines start..end of path overlap nothing already in the set."""
        return all(end < a or b < start for a, b in occupied[path])

    def add(kind: str, source: str, content: str, **extra: object) -> None:
        if extra.get("path") and extra.get("start_line"):
            occupied[str(extra["path"])].append((int(extra["start_line"]), int(extra["end_line"])))  # type: ignore[call-overload]
        items.append({"id": f"h{len(items):04d}", "cluster": f"c{cluster:04d}", "kind": kind,
                      "source": source, "content": content, **extra})

    funcs = functions(base, rng)
    used, seen_ranges = [], defaultdict(list)
    for f in funcs:  # positives: functions that do not nest in or overlap one another
        if all(f["end"] < a or b < f["start"] for a, b in seen_ranges[f["path"]]):
            seen_ranges[f["path"]].append((f["start"], f["end"]))
            used.append(f)
        if len(used) == 240:
            break
    funcs = [f for f in funcs if f not in used]
    for i, f in enumerate(used[:80]):  # reformatted copies
        add("reformatted", "files", f["content"], path=f["path"], start_line=f["start"], end_line=f["end"])
        add("reformatted", "serena", reformat(f["content"], i % 5), path=f["path"])
        cluster += 1
    for f in used[80:110]:  # exact copies from two servers
        add("exact", "files", f["content"], path=f["path"], start_line=f["start"], end_line=f["end"])
        add("exact", "grep", f["content"], path=f["path"], start_line=f["start"], end_line=f["end"])
        cluster += 1
    for f in used[110:140]:  # edited copies
        add("edited", "files", f["content"], path=f["path"], start_line=f["start"], end_line=f["end"])
        add("edited", "github", edit(f["content"], rng), uri=f"https://github.com/example/{f['path']}")
        cluster += 1
    for name, section in readme_sections(base):  # one document from two servers
        add("two_servers", "context7", section, title=name)
        add("two_servers", "web", demarkup(section), uri=f"https://pypi.org/project/{name}/")
        cluster += 1
    files = sorted({f["path"] for f in funcs})
    rng.shuffle(files)
    made = 0
    for rel in files:  # overlapping windows, and adjacent non-overlapping windows
        lines = (base / rel).read_text("utf-8", errors="replace").split("\n")
        if len(lines) < 140:
            continue
        start = rng.randrange(0, len(lines) - 130)
        if not free(rel, start + 1, start + 120):
            continue
        shift = rng.choice([10, 20, 30])
        first, second = lines[start : start + 40], lines[start + shift : start + shift + 40]
        add("overlap", "files", "\n".join(first), path=rel, start_line=start + 1, end_line=start + 40)
        add("overlap", "serena", "\n".join(second), path=rel, start_line=start + shift + 1,
            end_line=start + shift + 40)
        cluster += 1
        after = lines[start + 80 : start + 120]
        add("hard_negative", "files", "\n".join(after), path=rel, start_line=start + 81, end_line=start + 120)
        cluster += 1
        made += 1
        if made >= 30:
            break
    # hard negatives: distinct functions most similar to one already in the set
    pool = funcs[:3000]
    chosen = used[:140]
    scores = process.cdist([f["content"] for f in chosen], [f["content"] for f in pool],
                           scorer=Levenshtein.normalized_similarity, workers=2)
    taken: set[int] = set()
    for row in scores.argsort(axis=None)[::-1]:
        i, j = divmod(int(row), len(pool))
        if j in taken or pool[j]["content"].strip() == chosen[i]["content"].strip():
            continue
        if pool[j]["name"] == chosen[i]["name"] and pool[j]["path"] == chosen[i]["path"]:
            continue
        if not free(pool[j]["path"], pool[j]["start"], pool[j]["end"]):  # same lines: a true overlap
            continue
        taken.add(j)
        f = pool[j]
        add("hard_negative", "tasks", f["content"], path=f["path"], start_line=f["start"], end_line=f["end"],
            nearest=round(float(scores[i, j]), 3))
        cluster += 1
        if len(taken) >= 60:
            break
    with OUT.open("w", encoding="utf-8") as out:
        for item in items:
            out.write(json.dumps(item, ensure_ascii=False) + "\n")
    print(f"{len(items)} items, {cluster} clusters -> {OUT}")


if __name__ == "__main__":
    main()
