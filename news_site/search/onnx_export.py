"""The ONNX form of a sentence-transformers model's transformer, written once per model.

Semantic search runs the model under ONNX Runtime (news_site/search/embeddings.py), which needs
neither torch nor transformers. Only this export does: it runs as a process of its own,

    python -m news_site.search.onnx_export MODEL_DIRECTORY TARGET.onnx

so that the ingest run or web worker that asked for it never imports them (and never holds
their few hundred MB). The graph maps the tokenizer's inputs to the last hidden state, in fp32,
with batch and sequence length left free; pooling and normalisation stay with the caller.
"""

import os
import sys
from pathlib import Path

# The legacy (TorchScript) exporter, opset 17: it needs only the `onnx` package beside torch,
# and ONNX Runtime reproduces the torch model's outputs within 1e-5 with its graph.
OPSET = 17
OUTPUT = "last_hidden_state"


def model_export(*, directory: Path, target: Path) -> None:
    """Write the model of `directory` to `target` (replaced whole, never left half-written)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(directory)
    model = AutoModel.from_pretrained(directory).eval()
    names = [name for name in tokenizer.model_input_names if name != "position_ids"]

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, *inputs: torch.Tensor) -> torch.Tensor:
            return self.model(**dict(zip(names, inputs, strict=True))).last_hidden_state

    # Two texts of different lengths: a sample of batch 1 or without padding could let the
    # tracer fold a shape into a constant.
    sample = tokenizer(
        ["a sample sentence", "another, somewhat longer sample sentence for the trace"],
        padding=True,
        return_tensors="pt",
    )
    partial = target.with_name(f"{target.name}.{os.getpid()}.partial")
    try:
        torch.onnx.export(
            LastHiddenState(),
            tuple(sample[name] for name in names),
            str(partial),
            dynamo=False,
            opset_version=OPSET,
            input_names=names,
            output_names=[OUTPUT],
            dynamic_axes={name: {0: "batch", 1: "sequence"} for name in [*names, OUTPUT]},
        )
        partial.replace(target)
    finally:
        # A failed export leaves nothing behind (after a success the file has moved).
        partial.unlink(missing_ok=True)


if __name__ == "__main__":
    model_export(directory=Path(sys.argv[1]), target=Path(sys.argv[2]))
