"""Make a TRIBUTARY_HOME for scripts/walkthrough.sh: real third-party servers, a dead
one and a dozen fakes, over a small fixture repository (its folder is the second argument).

Real servers: server-memory and server-filesystem (tests/node), mcp-server-git (the
venv), and, when installed as the script says, server-everything, mcp-server-time and
mcp-server-fetch. Those with no search tool are what the app should skip and say so.
"""
import json
import sys
from pathlib import Path

import yaml

home = Path(sys.argv[1])
home.mkdir(parents=True, exist_ok=True)
ROOT = Path(__file__).resolve().parent.parent
PY = str(ROOT / ".venv/bin/python")
NODE_MODS = ROOT / "tests/node/node_modules/@modelcontextprotocol"
fake = str(ROOT / "tests/fakes/fake_server.py")
work = Path(sys.argv[2])
mem = work / "memory.jsonl"
mem.write_text("\n".join(json.dumps(e) for e in [
 {"type": "entity", "name": "routing rules", "entityType": "design note",
  "observations": ["Routing rules are case-insensitive regexes tried in order; the first match decides"]},
 {"type": "entity", "name": "secrets", "entityType": "design note",
  "observations": ["Secrets live in keyring references, never in the config file"]}]) + "\n")
repo = work / "demo-repo"
servers = {
  "memory": {"command": "node", "args": [str(NODE_MODS / "server-memory/dist/index.js")], "env": {"MEMORY_FILE_PATH": str(mem)}},
  "filesystem": {"command": "node", "args": [str(NODE_MODS / "server-filesystem/dist/index.js"), str(work)]},
  "git": {"command": str(ROOT / ".venv/bin/mcp-server-git"), "args": ["--repository", str(repo)]},
  "everything": {"command": "node", "args": [str(work / "mcpnode/node_modules/@modelcontextprotocol/server-everything/dist/index.js")]},
  "time": {"command": str(work / "mcpvenv/bin/mcp-server-time")},
  "fetch": {"command": str(work / "mcpvenv/bin/mcp-server-fetch")},
  "dead-hang": {"command": PY, "args": [fake, "--name", "dead-hang", "--mode", "hang"], "timeout": 2},
}
for name in ["wiki", "tickets", "slack-archive-search", "confluence", "context7", "runbooks", "adr"]:
    servers[name] = {"command": PY, "args": [fake, "--name", name, "--hits", "3", "--delay", "0.1"]}
(home / "config.yaml").write_text(yaml.safe_dump({"servers": servers}, sort_keys=False))
print(home / "config.yaml")
