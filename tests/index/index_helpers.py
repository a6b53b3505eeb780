"""Test doubles and a small multi-language fixture repository for the index tests."""

from __future__ import annotations

import hashlib
import re
import textwrap
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tributary.engine.index.backend import IndexBackend
from tributary.engine.index.manager import index_repository, open_index_store
from tributary.engine.index.search import SearchHit, encode_query, hybrid_search, make_filter
from tributary.engine.index.store import IndexStore
from tributary.engine.localsearch.embedder import Vectors

_TOKEN = re.compile(r"[A-Za-z]+")


class HashingEmbedder:
    """Deterministic bag-of-words feature hashing; counts what it was asked to encode."""

    name = "test-hashing"
    dim = 64
    version = "1"

    def __init__(self, delay_s: float = 0.0, version: str = "1") -> None:
        self.calls = 0
        self.texts: list[str] = []
        self.delay_s = delay_s
        self.version = version

    def encode(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        self.texts.extend(texts)
        if self.delay_s:
            time.sleep(self.delay_s * len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in _TOKEN.findall(text.lower()):
                bucket = int.from_bytes(hashlib.blake2b(token.encode(), digest_size=4).digest())
                out[row, bucket % self.dim] += 1.0
            out[row, 0] += 1e-3  # never an all-zero row
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


FILES: dict[str, str] = {
    "src/billing/invoice.py": '''
        """Invoices and their totals."""

        import decimal

        TAX_RATE = decimal.Decimal("0.2")


        class InvoiceCalculator:
            """Computes invoice totals with tax."""

            currency = "EUR"

            def total_with_tax(self, amount):
                """Return the amount plus value added tax."""
                return amount * (1 + TAX_RATE)

            def refund(self, amount):
                return -amount


        @staticmethod
        def parse_invoice_number(text: str) -> int:
            """Parse an invoice number such as INV-0042."""
            return int(text.split("-")[1])
    ''',
    "src/net/http_client.py": '''
        def fetch_url(url, timeout=3.0):
            """Download a web page over HTTP with a timeout."""
            import urllib.request
            return urllib.request.urlopen(url, timeout=timeout).read()
    ''',
    "web/app.js": """
        /** Render the shopping cart widget. */
        function renderCart(items) {
          return items.map((i) => i.name).join(", ");
        }

        class CartStore {
          addItem(item) { this.items.push(item); }
        }

        const formatPrice = (cents) => (cents / 100).toFixed(2);
    """,
    "web/types.ts": """
        export interface Shipment { id: string; weightKg: number }

        export function shipmentCost(s: Shipment): number {
          return s.weightKg * 4.5;
        }

        export class Courier {
          deliver(s: Shipment): void {}
        }
    """,
    "cmd/server.go": """
        package main

        // Server answers geocoding requests.
        type Server struct{ port int }

        // Start listens on the configured port.
        func (s *Server) Start() error { return nil }

        func geocodeAddress(addr string) (float64, float64) { return 0, 0 }
    """,
    "crates/lib.rs": """
        /// A point in the plane.
        pub struct Point { x: f64, y: f64 }

        impl Point {
            /// Euclidean distance to another point.
            pub fn distance(&self, other: &Point) -> f64 { 0.0 }
        }

        pub fn origin() -> Point { Point { x: 0.0, y: 0.0 } }
    """,
    "java/Greeter.java": """
        package demo;

        /** Greets people politely. */
        public class Greeter {
            public Greeter() {}

            /** Say hello to someone. */
            public String greet(String name) { return "Hello " + name; }
        }
    """,
    "docs/guide.md": """
        # User guide

        Configure the refund policy in settings before issuing credit notes.

        ## Troubleshooting

        If the geocoder fails, check the network proxy.
    """,
    ".gitignore": """
        *.log
        secret/
    """,
    "app.log": "an ignored log line\n",
    "secret/keys.txt": "top secret\n",
    "web/.gitignore": "generated.js\n",
    "web/generated.js": "function generatedCode() {}\n",
    "package-lock.json": '{"lockfileVersion": 3}\n',
    "node_modules/dep/index.js": "module.exports = 1;\n",
    "assets/logo.bin": "",
}


def make_repo(root: Path) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if rel.endswith(".bin"):
            path.write_bytes(b"\x89PNG\x00\x00binary")
        else:
            path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


def indexed_files(tmp_path: Path, files: dict[str, str], **kw: Any) -> IndexStore:
    """A repository of ``files`` (path -> text) under ``tmp_path``, indexed with the
    hashing embedder where ``kw`` (the ``at`` fixture's) says, and its store opened."""
    repo = tmp_path / "repo"
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    index_repository(repo, embedder=HashingEmbedder(), **kw)
    return open_index_store(repo, **kw)


def search_repository(
    path: Path,
    query: str,
    *,
    embedder: HashingEmbedder,
    index_dir: Path | None = None,
    backend: IndexBackend | None = None,
    top_k: int = 10,
    language: str | None = None,
    kinds: list[str] | None = None,
    path_glob: str | None = None,
) -> list[SearchHit]:
    """Hybrid search of one indexed repository in-process, as the files server runs it,
    on either backend (the ``at`` fixture's keyword arguments)."""
    store = open_index_store(path, index_dir=index_dir, backend=backend)
    try:
        where = make_filter(store, language=language, kinds=kinds, path_glob=path_glob)
        name = store.get_meta("name") or path.name
        return hybrid_search(
            store, query, lambda: encode_query(embedder, query), repo=name, top_k=top_k, where=where
        )
    finally:
        store.close()
