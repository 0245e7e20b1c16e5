"""Publish new versions from the data repository (COMPLIANCE_DATA_REPO or --repo)."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from compliance_site.records.gitlog import HistoryError
from compliance_site.records.reindex import Problem, ReindexRefused, reindex


class Command(BaseCommand):
    help = "Walk the data repository's git log and publish new versions (idempotent)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--repo", default=None, help="Path of the data repository.")
        parser.add_argument(
            "--allow-rewritten-history",
            action="store_true",
            help="Publish a rewritten history's changes on top of what was published.",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        repo_path = options["repo"] or str(settings.COMPLIANCE_DATA_REPO)
        try:
            report = reindex(
                repo_path=repo_path,
                allow_rewritten_history=options["allow_rewritten_history"],
            )
        except ReindexRefused as exc:
            raise CommandError(str(exc), returncode=2) from exc
        except HistoryError as exc:
            raise CommandError(str(exc), returncode=2) from exc
        if options["verbosity"] >= 1:
            for notice in report.notices:
                self.stdout.write(f"notice: {notice}")
        for problem in report.problems:
            self.stderr.write(_describe("invalid", problem))
        reported = {(p.path, p.commit_sha) for p in report.problems}
        for problem in report.outstanding:
            if (problem.path, problem.commit_sha) not in reported:
                self.stderr.write(_describe("still invalid", problem))
        published = ", ".join(f"{n} {kind}" for kind, n in sorted(report.published.items()))
        if options["verbosity"] >= 1:
            rewritten = f" (history rewritten from {report.rewritten_from[:12]})"
            self.stdout.write(
                f"reindex: head {report.head[:12]}, {report.commits_read} commits read, "
                f"published {published or 'nothing'}"
                f"{rewritten if report.rewritten_from else ''}"
            )
        if not report.ok:
            raise CommandError(
                f"{len(report.problems)} invalid file versions in this run, "
                f"{len(report.outstanding)} files invalid at head; "
                "their last good versions stay live",
                returncode=1,
            )


def _describe(label: str, problem: Problem) -> str:
    schema = f" [schema: {problem.schema_path}]" if problem.schema_path else ""
    return f"{label}: {problem.path} at {problem.commit_sha[:12]}: {problem.message}{schema}"
