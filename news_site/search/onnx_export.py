"""The ONNX form of a sentence-transformers model's transformer, built from its safetensors
weights with the `onnx` package alone: no torch, no transformers.

Semantic search runs the model under ONNX Runtime (news_site/search/embeddings.py). The graph is
written once per model, by a process of its own,

    python -m news_site.search.onnx_export MODEL_DIRECTORY TARGET.onnx

so that the web worker or ingest run that asked for it never holds the weights twice. It is the
BERT encoder (`model_type: bert` in the model's config.json: all-MiniLM-L6-v2 and its kin):
embeddings, then `num_hidden_layers` layers of self-attention and feed-forward, each followed by
a residual sum and a layer norm, exactly as transformers' BertModel computes them in fp32. Its
inputs are the tokenizer's (input_ids, attention_mask, token_type_ids), batch and sequence
length left free; its output is the last hidden state. Pooling and normalisation stay with the
caller, as the model's sentence-transformers pipeline says.

The file written holds the encoder's linear layers in 8 bits (`DynamicQuantizeMatMul`: weights
quantised here once, per output channel, and stored as uint8 with a zero point of 128;
activations quantised to uint8 as they arrive, one scale per run of the graph, which is why
embeddings.py runs one text per run). Unsigned weights keep ONNX Runtime's integer products
exact on every x86 CPU: with int8 weights, a CPU with AVX2 but not VNNI sums them in pairs
that saturate at 16 bits (_Graph.linear_int8). On the CPU with VNNI where it was chosen, it
cost a third of fp32's CPU time and moved vectors by at most 0.017 in cosine, with search
recall unchanged (docs/decisions.md, "The embedding model in int8"); on one with AVX2 alone it
costs three quarters of fp32's time. The fp32 graph (`model_graph(..., int8=False)`) is the
one the tests hold to sentence-transformers' own vectors. The embedding tables and layer norms
stay fp32.
"""

import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import numpy as np

OPSET = 17
OUTPUT = "last_hidden_state"
INPUTS = ("input_ids", "attention_mask", "token_type_ids")
# Bumped when the graph this module builds changes: the cached file is named after it
# (embeddings._model_fingerprint), so a changed builder writes the file anew.
BUILDER_VERSION = "bert-onnx-5-u8u8"


class UnsupportedArchitecture(ValueError):
    """A model that is not a BERT encoder with absolute positions and the exact GELU."""


class _Graph:
    """Nodes and weights of the graph being built; every name is made unique here."""

    def __init__(self, weights: dict[str, np.ndarray], *, int8: bool) -> None:
        self.weights = weights
        self.int8 = int8
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def tensor(self, value: np.ndarray, name: str | None = None) -> str:
        from onnx import numpy_helper

        self._count += 1
        name = name or f"const_{self._count}"
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(self, key: str, *, transpose: bool = False) -> str:
        value = self.weights[key]
        return self.tensor(value.T if transpose else value, key)

    def op(self, kind: str, *inputs: str, **attributes: Any) -> str:
        from onnx import helper

        self._count += 1
        output = f"{kind.lower()}_{self._count}"
        self.nodes.append(helper.make_node(kind, list(inputs), [output], **attributes))
        return output

    def linear(self, x: str, prefix: str) -> str:
        """x @ W.T + b, with W stored (out, in) as torch's Linear keeps it."""
        if self.int8:
            return self.linear_int8(x, prefix)
        product = self.op("MatMul", x, self.weight(f"{prefix}.weight", transpose=True))
        return self.op("Add", product, self.weight(f"{prefix}.bias"))

    def linear_int8(self, x: str, prefix: str) -> str:
        """The same product on 8-bit weights, one symmetric scale per output channel (a
        channel's range alone sets its step; one scale for the whole matrix had moved vectors
        by up to 0.11 in cosine). ONNX Runtime quantises `x` per run and multiplies in
        integers."""
        weight = self.weights[f"{prefix}.weight"]
        scale = np.abs(weight).max(axis=1) / 127
        scale = np.where(scale > 0, scale, 1).astype(np.float32)
        codes = np.clip(np.rint(weight / scale[:, None]), -127, 127)
        # The codes in [-127, 127] shifted by 128 into uint8, the zero point 128 taking the
        # shift back: the same values, but ONNX Runtime then multiplies uint8 by uint8 in
        # exact 32-bit sums. With int8 weights, AVX2 without VNNI (VPMADDUBSW) saturates a
        # pair of products at 32767, which had put 0.029 in cosine between a reference text
        # and its fp32 vector (0.020 exact). Weights cut to 7 bits avoid the saturation too,
        # but lost more to the coarser step (0.035); this costs about a sixth more time.
        codes = (codes + 128).astype(np.uint8)
        return self.op(
            "DynamicQuantizeMatMul",
            x,
            self.tensor(codes.T, f"{prefix}.weight_uint8"),
            self.tensor(scale, f"{prefix}.weight_scale"),
            self.tensor(np.full(len(scale), 128, dtype=np.uint8), f"{prefix}.weight_zero_point"),
            self.weight(f"{prefix}.bias"),
            domain="com.microsoft",
        )

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        return self.op(
            "LayerNormalization",
            x,
            self.weight(f"{prefix}.weight"),
            self.weight(f"{prefix}.bias"),
            axis=-1,
            epsilon=eps,
        )


def _check(config: dict[str, Any]) -> None:
    if config.get("model_type") != "bert":
        raise UnsupportedArchitecture(f"model_type {config.get('model_type')!r} is not bert")
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise UnsupportedArchitecture("only absolute position embeddings are supported")
    if config.get("hidden_act", "gelu") != "gelu":
        raise UnsupportedArchitecture(f"activation {config['hidden_act']!r} is not supported")
    if config["hidden_size"] % config["num_attention_heads"]:
        raise UnsupportedArchitecture("hidden_size is not a multiple of the attention heads")


def _weights(directory: Path) -> dict[str, np.ndarray]:
    """The encoder's tensors by BertModel's names (a `bert.` prefix, as a task model saves
    them, is dropped); float32 throughout."""
    from safetensors.numpy import load_file

    path = directory / "model.safetensors"
    if not path.exists():
        raise UnsupportedArchitecture(f"{directory} has no model.safetensors")
    return {
        key.removeprefix("bert."): value.astype(np.float32) if value.dtype.kind == "f" else value
        for key, value in load_file(path).items()
    }


def _embeddings(graph: _Graph, eps: float) -> str:
    """Word + position + token type embeddings, then their layer norm."""
    words = graph.op("Gather", graph.weight("embeddings.word_embeddings.weight"), "input_ids")
    types = graph.op(
        "Gather", graph.weight("embeddings.token_type_embeddings.weight"), "token_type_ids"
    )
    # The first `sequence` rows of the position table, the same for every row of the batch
    # (broadcast in the Add).
    length = graph.op("Shape", "input_ids", start=1, end=2)
    position = graph.op(
        "Slice",
        graph.weight("embeddings.position_embeddings.weight"),
        graph.tensor(np.array([0], dtype=np.int64)),
        length,
        graph.tensor(np.array([0], dtype=np.int64)),
    )
    summed = graph.op("Add", graph.op("Add", words, types), position)
    return graph.layer_norm(summed, "embeddings.LayerNorm", eps)


def _attention_bias(graph: _Graph) -> str:
    """(1 - mask) * the float32 minimum, shaped (batch, 1, 1, sequence): added to the attention
    scores, it leaves padding positions no weight (as BertModel's extended mask does)."""
    mask = graph.op("Cast", "attention_mask", to=1)  # 1: FLOAT
    mask = graph.op("Unsqueeze", mask, graph.tensor(np.array([1, 2], dtype=np.int64)))
    inverted = graph.op("Sub", graph.tensor(np.array(1.0, dtype=np.float32)), mask)
    minimum = graph.tensor(np.array(np.finfo(np.float32).min, dtype=np.float32))
    return graph.op("Mul", inverted, minimum)


def _layer(graph: _Graph, x: str, bias: str, index: int, config: dict[str, Any]) -> str:
    prefix = f"encoder.layer.{index}"
    heads = config["num_attention_heads"]
    head_size = config["hidden_size"] // heads
    eps = config.get("layer_norm_eps", 1e-12)
    # (batch, sequence, hidden) <-> (batch, sequence, heads, head_size); 0 keeps a dimension.
    split = graph.tensor(np.array([0, 0, heads, head_size], dtype=np.int64))
    merge = graph.tensor(np.array([0, 0, heads * head_size], dtype=np.int64))

    def heads_of(name: str, perm: list[int]) -> str:
        projected = graph.linear(x, f"{prefix}.attention.self.{name}")
        return graph.op("Transpose", graph.op("Reshape", projected, split), perm=perm)

    query = heads_of("query", [0, 2, 1, 3])  # (batch, heads, sequence, head_size)
    key = heads_of("key", [0, 2, 3, 1])  # (batch, heads, head_size, sequence)
    value = heads_of("value", [0, 2, 1, 3])
    scores = graph.op("MatMul", query, key)
    scale = graph.tensor(np.array(1 / math.sqrt(head_size), dtype=np.float32))
    scores = graph.op("Add", graph.op("Mul", scores, scale), bias)
    probabilities = graph.op("Softmax", scores, axis=-1)
    context = graph.op("MatMul", probabilities, value)
    context = graph.op("Reshape", graph.op("Transpose", context, perm=[0, 2, 1, 3]), merge)
    attended = graph.linear(context, f"{prefix}.attention.output.dense")
    attended = graph.layer_norm(
        graph.op("Add", attended, x), f"{prefix}.attention.output.LayerNorm", eps
    )
    # The feed-forward block with the exact GELU: 0.5 * h * (1 + erf(h / sqrt(2))).
    hidden = graph.linear(attended, f"{prefix}.intermediate.dense")
    erf = graph.op(
        "Erf", graph.op("Div", hidden, graph.tensor(np.array(math.sqrt(2), dtype=np.float32)))
    )
    one_plus = graph.op("Add", erf, graph.tensor(np.array(1.0, dtype=np.float32)))
    half = graph.tensor(np.array(0.5, dtype=np.float32))
    activated = graph.op("Mul", graph.op("Mul", hidden, half), one_plus)
    out = graph.linear(activated, f"{prefix}.output.dense")
    return graph.layer_norm(graph.op("Add", out, attended), f"{prefix}.output.LayerNorm", eps)


def model_graph(directory: Path, *, int8: bool = True) -> Any:
    """The onnx.ModelProto of the BERT encoder in `directory` (config.json, model.safetensors),
    its linear layers in int8 (or as the model computes them in fp32, with `int8=False`)."""
    import onnx
    from onnx import TensorProto, helper

    config = json.loads((directory / "config.json").read_text())
    _check(config)
    graph = _Graph(_weights(directory), int8=int8)
    eps = config.get("layer_norm_eps", 1e-12)
    x = _embeddings(graph, eps)
    bias = _attention_bias(graph)
    for index in range(config["num_hidden_layers"]):
        x = _layer(graph, x, bias, index, config)
    graph.nodes.append(helper.make_node("Identity", [x], [OUTPUT]))
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in INPUTS
    ]
    output = helper.make_tensor_value_info(
        OUTPUT, TensorProto.FLOAT, ["batch", "sequence", config["hidden_size"]]
    )
    body = helper.make_graph(graph.nodes, "bert_encoder", inputs, [output], graph.initializers)
    # ONNX Runtime's own operators (DynamicQuantizeMatMul) live in the com.microsoft domain.
    opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
    model = helper.make_model(body, opset_imports=opsets)
    model.ir_version = 8  # readable by every ONNX Runtime the semantic extra allows
    onnx.checker.check_model(model)
    return model


def model_export(*, directory: Path, target: Path) -> None:
    """Write the model of `directory` to `target` (replaced whole, never left half-written),
    its weights beside it in `<target>.data`: ONNX Runtime reads them from there straight into
    the session's tensors, where a graph holding them inline is parsed into memory first and
    copied from (a process that loads the model peaked about 90 MB higher)."""
    import onnx

    model = model_graph(directory)
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    # onnx appends to an existing weights' file: one left by an export that stopped before its
    # graph was in place would grow by a copy of the weights each time.
    target.with_name(f"{target.name}.data").unlink(missing_ok=True)
    try:
        # The graph names its weights' file; it is complete before the graph is in place.
        onnx.save_model(
            model,
            str(partial),
            save_as_external_data=True,
            all_tensors_to_one_file=True,
            location=f"{target.name}.data",
        )
        # Readable by whoever may read the graph (onnx writes the weights owner-only).
        shutil.copymode(partial, target.with_name(f"{target.name}.data"))
        partial.replace(target)
    finally:
        # A failed export leaves nothing behind (after a success the file has moved).
        partial.unlink(missing_ok=True)


if __name__ == "__main__":
    model_export(directory=Path(sys.argv[1]), target=Path(sys.argv[2]))
