"""A fast first pass for exact dense search over large indexes: int8 scores on ONNX Runtime.

Scoring every chunk is one matrix-vector product, and on a large index (CPython's
``Lib/``: 66k chunks x 384 float32, 100 MB) it is bound by memory, not arithmetic. An
int8 copy is a quarter of the bytes and ONNX Runtime's ``MatMulInteger`` runs it on the
CPU's integer dot-product units, several times faster (docs/benchmarks.md). The int8
scores only pick a shortlist; the shortlist is then scored exactly in float32, so
every score returned is exact and only the pool's far edge can differ from a full
float32 pass.

The matrix is quantised to 7 bits (±63), not 8. On CPUs without VNNI, ONNX Runtime
multiplies uint8 by int8 with ``vpmaddubsw``, which adds two products into a saturating
int16: 2 × 255 × 127 overflows it, 2 × 255 × 63 = 32,130 does not. With 7 bits the result
is the same integer product on every CPU, and the quantisation's error bound holds
everywhere.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

COARSE_MIN_ROWS = 20_000  # below this the float32 product is already fast enough
_ZERO_POINT = 128  # the query is quantised to uint8 around this
_ROW_LEVELS = 63.0  # 7-bit rows: no int16 saturation in the AVX2 kernel (module docstring)
_QUERY_LEVELS = 127.0
QUANTISE_BLOCK = 65_536  # rows quantised at a time


class Int8Scorer:
    """Approximate ``matrix @ vector`` for one fixed matrix of unit vectors."""

    def __init__(self, matrix: npt.NDArray[np.float32]) -> None:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper

        rows, dim = matrix.shape
        # Quantised a block of rows at a time, straight into the transposed layout the
        # graph wants: a million-row matrix would otherwise need several float32 copies
        # of itself at once. Each copy of the int8 matrix is dropped as soon as the next
        # one exists (array, tensor, serialised model, the session's own).
        self._row_scales = np.empty(rows, dtype=np.float32)
        transposed = np.empty((dim, rows), dtype=np.int8)
        for start in range(0, rows, QUANTISE_BLOCK):
            block = matrix[start : start + QUANTISE_BLOCK]
            peaks = np.abs(block).max(axis=1)
            scales = np.where(peaks > 0, peaks / _ROW_LEVELS, 1.0).astype(np.float32)
            self._row_scales[start : start + len(block)] = scales
            transposed[:, start : start + len(block)] = np.round(block / scales[:, None]).astype(np.int8).T
        weights = numpy_helper.from_array(transposed, "matrix")
        del transposed
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["query", "matrix", "zero"], ["scores"])],
            "int8_scores",
            [helper.make_tensor_value_info("query", TensorProto.UINT8, [1, dim])],
            [helper.make_tensor_value_info("scores", TensorProto.INT32, [1, rows])],
            [weights, numpy_helper.from_array(np.array(_ZERO_POINT, dtype=np.uint8), "zero")],
        )
        del weights
        # IR 9 / opset 17: what every onnxruntime this project accepts can load.
        model = helper.make_model(
            graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9
        )
        del graph
        serialised = model.SerializeToString()
        del model
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # the other core is answering the keyword query
        options.log_severity_level = 3
        self._session = ort.InferenceSession(serialised, options, providers=["CPUExecutionProvider"])

    def scores(self, vector: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
        scale = _query_scale(vector)
        query = np.clip(np.round(vector / scale) + _ZERO_POINT, 0, 255).astype(np.uint8)
        raw = self._session.run(None, {"query": query[None, :]})[0][0]
        approx: npt.NDArray[np.float32] = raw.astype(np.float32) * (self._row_scales * scale)
        return approx


def _query_scale(vector: npt.NDArray[np.float32]) -> float:
    peak = float(np.abs(vector).max())
    return peak / _QUERY_LEVELS if peak > 0 else 1.0


def shortlist_size(k: int, candidates: int) -> int:
    """How many int8 picks to rescore exactly for a top ``k``: twice the pool, so an item
    that belongs in it would have to be misjudged by more than half the pool's spread."""
    return min(candidates, max(2 * k, k + 200))
