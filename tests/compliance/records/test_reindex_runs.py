"""Every reindex run leaves a record of what it did, however it ends (what /metrics reports)."""

import pytest

from compliance_site.records.gitlog import HistoryError
from compliance_site.records.models import ReindexOutcome, ReindexRun
from compliance_site.records.reindex import ReindexRefused, reindex
from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_a_clean_run_records_what_it_read_and_published(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    head = data_repo.commit("Seed")

    run_reindex()

    run = ReindexRun.objects.get()
    assert run.outcome == ReindexOutcome.OK
    assert run.head == head
    assert (run.commits_read, run.versions_published) == (1, 3)
    assert (run.invalid_versions, run.invalid_files) == (0, 0)
    assert run.started_at <= run.finished_at


def test_a_run_with_an_invalid_file_records_it(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    data_repo.update("TX", notice={"required": "sometimes"})

    run_reindex()

    run = ReindexRun.objects.get()
    assert run.outcome == ReindexOutcome.INVALID_FILES
    assert (run.invalid_versions, run.invalid_files) == (1, 1)


def test_a_refused_rewritten_history_is_recorded(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.update("TX", summary="Two.")
    run_reindex()
    data_repo.repo.git.reset("--hard", "HEAD~1")
    data_repo.update("TX", summary="Other two.")

    with pytest.raises(ReindexRefused):
        run_reindex()

    last = ReindexRun.objects.order_by("-finished_at").first()
    assert last.outcome == ReindexOutcome.REFUSED
    assert "history was rewritten" in last.error


def test_a_run_stopped_by_an_error_is_recorded_as_failed(tmp_path):
    with pytest.raises(HistoryError):
        reindex(repo_path=str(tmp_path / "nowhere"))

    run = ReindexRun.objects.get()
    assert run.outcome == ReindexOutcome.FAILED
    assert run.error.startswith("HistoryError: ")
    assert run.versions_published == 0
