"""The ranking tab: fusion, dedup, budget and cache settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QDoubleSpinBox,
    QFormLayout,
    QGridLayout,
    QGroupBox,
    QLineEdit,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from tributary.app.combo_box import ComboBox
from tributary.app.layouts import Reflow
from tributary.app.spin_box import DoubleSpinBox, SpinBox
from tributary.engine.config.schema import TOP_K_MAX, TOP_K_MIN, CacheBackend, Config
from tributary.engine.model import (
    CONTEXT_FORMATS,
    FUSION_STRATEGIES,
    OVERFLOW_STRATEGIES,
    RRF_K_STRATEGIES,
)

PAGE_MARGIN = 8  # px around the groups
COMPOSITE = "composite"  # the one strategy that reads the composite weights


def _spin(low: int, high: int, step: int = 1, suffix: str = "") -> QSpinBox:
    box = SpinBox()
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setSuffix(suffix)
    return box


def _dspin(low: float, high: float, step: float, decimals: int = 2, suffix: str = "") -> QDoubleSpinBox:
    box = DoubleSpinBox()
    box.setRange(low, high)
    box.setSingleStep(step)
    box.setDecimals(decimals)
    box.setSuffix(suffix)
    return box


def _combo(values: Sequence[str]) -> ComboBox:
    box = ComboBox()
    box.addItems(values)
    return box


class RankingPage(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.config: Config | None = None
        self._loading = False
        self.strategy = _combo(FUSION_STRATEGIES)
        self.rrf_k = _spin(1, 1000)
        self.top_k = _spin(TOP_K_MIN, TOP_K_MAX)
        self.w_keyword = _dspin(0, 1, 0.05)
        self.w_freshness = _dspin(0, 1, 0.05)
        self.w_reputation = _dspin(0, 1, 0.05)
        self.w_length = _dspin(0, 1, 0.05)
        self.dedup = QCheckBox("Fold duplicates")
        self.fuzzy = _dspin(0.5, 1.0, 0.01)
        self.semantic = QCheckBox("Semantic duplicates (embedding cosine)")
        self.semantic_threshold = _dspin(0.5, 1.0, 0.01)
        self.overlaps = QCheckBox("Merge overlapping chunks of one file")
        self.max_tokens = _spin(500, 1_000_000, 500, " tokens")
        self.reserved = _spin(0, 1_000_000, 100, " tokens")
        self.overflow = _combo(OVERFLOW_STRATEGIES)
        self.format = _combo(CONTEXT_FORMATS)
        self.cache_backend = _combo(get_args(CacheBackend))
        self.ttl = _dspin(0, 86_400, 30, 0, " s")
        self.redis_url = QLineEdit()
        self.max_entries = _spin(0, 10_000_000, 100)

        fusion = QFormLayout()
        fusion.addRow("Strategy", self.strategy)
        fusion.addRow("RRF k", self.rrf_k)
        fusion.addRow("Results (top N)", self.top_k)
        fusion.addRow("Composite: keyword", self.w_keyword)
        fusion.addRow("Composite: freshness", self.w_freshness)
        fusion.addRow("Composite: reputation", self.w_reputation)
        fusion.addRow("Composite: length", self.w_length)
        dedup = QFormLayout()
        dedup.addRow(self.dedup)
        dedup.addRow("Fuzzy threshold", self.fuzzy)
        dedup.addRow(self.semantic)
        dedup.addRow("Semantic threshold", self.semantic_threshold)
        dedup.addRow(self.overlaps)
        budget = QFormLayout()
        budget.addRow("Max tokens", self.max_tokens)
        budget.addRow("Reserved", self.reserved)
        budget.addRow("On overflow", self.overflow)
        budget.addRow("Format", self.format)
        cache = QFormLayout()
        cache.addRow("Backend", self.cache_backend)
        cache.addRow("Time to live", self.ttl)
        cache.addRow("Redis URL", self.redis_url)
        cache.addRow("Max entries", self.max_entries)

        self._forms = (fusion, dedup, budget, cache)
        grid = QGridLayout()
        boxes: list[QGroupBox] = []
        for title, form in (("Fusion", fusion), ("Duplicates", dedup), ("Token budget", budget), ("Cache", cache)):
            box = QGroupBox(title)
            box.setLayout(form)
            boxes.append(box)
        self.groups = Reflow(grid, boxes, 2)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN, PAGE_MARGIN)
        layout.addLayout(grid)
        layout.addStretch()

        for spin in (self.rrf_k, self.top_k, self.max_tokens, self.reserved, self.max_entries):
            spin.valueChanged.connect(self._edited)
        for dspin in (self.w_keyword, self.w_freshness, self.w_reputation, self.w_length,
                      self.fuzzy, self.semantic_threshold, self.ttl):
            dspin.valueChanged.connect(self._edited)
        for combo in (self.strategy, self.overflow, self.format, self.cache_backend):
            combo.currentTextChanged.connect(self._edited)
        for check in (self.dedup, self.semantic, self.overlaps):
            check.toggled.connect(self._edited)
        self.redis_url.textEdited.connect(self._edited)

    def fit_width(self, width: int) -> None:
        """The groups two by two where they fit side by side in ``width``, else in one column."""
        widest = max(box.minimumSizeHint().width() for box in self.groups.widgets)
        spacing = self.groups.grid.horizontalSpacing()
        self.groups.arrange(2 if width >= 2 * widest + spacing + 2 * PAGE_MARGIN else 1)

    def load(self, config: Config) -> None:
        self.config = config
        self._loading = True
        f, d, b, c = config.fusion, config.dedup, config.budget, config.cache
        self.strategy.setCurrentText(f.strategy)
        self.rrf_k.setValue(f.rrf_k)
        self.top_k.setValue(f.top_k)
        self.w_keyword.setValue(f.composite.keyword)
        self.w_freshness.setValue(f.composite.freshness)
        self.w_reputation.setValue(f.composite.reputation)
        self.w_length.setValue(f.composite.length)
        self.dedup.setChecked(d.enabled)
        self.fuzzy.setValue(d.fuzzy_threshold)
        self.semantic.setChecked(d.semantic)
        self.semantic_threshold.setValue(d.semantic_threshold)
        self.overlaps.setChecked(d.merge_overlaps)
        self.max_tokens.setValue(b.max_tokens)
        self.reserved.setValue(b.reserved_tokens)
        self.overflow.setCurrentText(b.overflow)
        self.format.setCurrentText(b.format)
        self.cache_backend.setCurrentText(c.backend)
        self.ttl.setValue(c.ttl_s)
        self.redis_url.setText(c.redis_url)
        self.max_entries.setValue(c.max_entries)
        self._loading = False
        self._enable()

    def _enable(self) -> None:
        """Only the settings that count with the others as they are can be edited: a
        weight the chosen strategy ignores, left editable, reads as if it counted."""
        strategy, backend = self.strategy.currentText(), self.cache_backend.currentText()
        self._applies(self.rrf_k, strategy in RRF_K_STRATEGIES, f"Read by the {' and '.join(RRF_K_STRATEGIES)} strategies")
        for weight in self.composite_weights:
            self._applies(weight, strategy == COMPOSITE, f"Read by the {COMPOSITE} strategy")
        folding = self.dedup.isChecked()
        for setting in (self.fuzzy, self.semantic, self.overlaps):
            self._applies(setting, folding, "Read while duplicates are folded")
        self._applies(self.semantic_threshold, folding and self.semantic.isChecked(),
                      "Read while semantic duplicates are folded")
        self._applies(self.redis_url, backend == "redis", "Read by the redis cache")
        self._applies(self.ttl, backend != "off", "Read by every cache backend but off")
        self._applies(self.max_entries, backend in ("memory", "sqlite"), "Read by the memory and sqlite caches")

    @property
    def composite_weights(self) -> tuple[QDoubleSpinBox, ...]:
        return (self.w_keyword, self.w_freshness, self.w_reputation, self.w_length)

    def _applies(self, field: QWidget, used: bool, why: str) -> None:
        """``field`` and its label enabled when it counts; its tooltip says when it does."""
        field.setEnabled(used)
        field.setToolTip(why)
        for form in self._forms:
            label = form.labelForField(field)
            if label is not None:
                label.setEnabled(used)

    def _edited(self, *_: Any) -> None:
        if self._loading or self.config is None:
            return
        self._enable()
        f, d, b, c = self.config.fusion, self.config.dedup, self.config.budget, self.config.cache
        f.strategy = self.strategy.currentText()
        f.rrf_k = self.rrf_k.value()
        f.top_k = self.top_k.value()
        f.composite.keyword = self.w_keyword.value()
        f.composite.freshness = self.w_freshness.value()
        f.composite.reputation = self.w_reputation.value()
        f.composite.length = self.w_length.value()
        d.enabled = self.dedup.isChecked()
        d.fuzzy_threshold = self.fuzzy.value()
        d.semantic = self.semantic.isChecked()
        d.semantic_threshold = self.semantic_threshold.value()
        d.merge_overlaps = self.overlaps.isChecked()
        b.max_tokens = self.max_tokens.value()
        b.reserved_tokens = self.reserved.value()
        b.overflow = self.overflow.currentText()
        b.format = self.format.currentText()
        c.backend = self.cache_backend.currentText()  # type: ignore[assignment]
        c.ttl_s = self.ttl.value()
        c.redis_url = self.redis_url.text()
        c.max_entries = self.max_entries.value()
        self.changed.emit()
