import os

import pytest

from compliance_sync import Checkpoint, checkpoint_load, checkpoint_save


def test_a_missing_file_means_a_full_sync(tmp_path):
    assert checkpoint_load(tmp_path / "none.json") == Checkpoint()


def test_a_checkpoint_round_trips(tmp_path):
    saved = Checkpoint(sync_token="t1", pass_token="t2", cursor="c", pending=[{"version": 2}])

    checkpoint_save(tmp_path / "state.json", saved)

    assert checkpoint_load(tmp_path / "state.json") == saved


def test_a_failed_write_leaves_the_old_checkpoint_and_no_temporary_file(tmp_path, monkeypatch):
    path = tmp_path / "state.json"
    checkpoint_save(path, Checkpoint(sync_token="old"))

    def crash(source, target):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        checkpoint_save(path, Checkpoint(sync_token="new"))

    assert checkpoint_load(path).sync_token == "old"
    assert os.listdir(tmp_path) == ["state.json"]


def test_a_file_of_another_format_is_refused(tmp_path):
    path = tmp_path / "state.json"
    path.write_text('{"format": 99}')

    with pytest.raises(ValueError):
        checkpoint_load(path)
