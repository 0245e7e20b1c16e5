"""Published records: immutable version snapshots written only by `reindex`.

Every new version of a resource is one `ResourceVersion` row, which is also the change event of
the change feed. Rows are never updated or deleted once written; `Resource` only points at the
live (latest) version of each resource.
"""

from django.db import models


class ResourceType(models.TextChoices):
    STATE = "State"
    ESA_PROGRAM = "EsaProgram"
    CITATION = "Citation"


class ChangeSource(models.TextChoices):
    HUMAN = "human"
    LLM_DRAFTED = "llm_drafted"
    AUTOMATED_SYNC = "automated_sync"


class ResourceVersion(models.Model):
    resource_type = models.CharField(max_length=16, choices=ResourceType.choices)
    resource_key = models.CharField(max_length=2)
    version = models.PositiveIntegerField()
    # Global publication order of change events, assigned by reindex under its lock. The feed
    # pages on (committed_at, sequence) and pins its snapshot with the highest sequence seen.
    sequence = models.BigIntegerField(unique=True)
    # None only for an EsaProgram version that records the removal of the program.
    payload = models.JSONField(null=True)
    payload_hash = models.CharField(max_length=64)
    payload_schema_version = models.CharField(max_length=8)
    yaml_path = models.CharField(max_length=255)
    commit_sha = models.CharField(max_length=40)
    git_sha = models.CharField(max_length=12)
    # The published date: git's committer date clamped to the time of publication and never
    # before the previous event's, so it is non-decreasing in publication order
    # (records/publishing.py). The date the commit claims is kept beside it.
    committed_at = models.DateTimeField()
    git_committed_at = models.DateTimeField()
    # Stored so that committed_at is shown with the offset the commit was written in.
    committed_offset_minutes = models.SmallIntegerField(default=0)
    released_at = models.DateField()
    committed_by = models.CharField(max_length=255)
    change_summary = models.TextField()
    source = models.CharField(max_length=16, choices=ChangeSource.choices)
    diff = models.JSONField()
    published_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resource_type", "resource_key", "version"], name="unique_resource_version"
            ),
            models.CheckConstraint(condition=models.Q(version__gte=1), name="version_from_one"),
        ]
        indexes = [
            models.Index(fields=["resource_type", "resource_key", "released_at"]),
            models.Index(fields=["committed_at", "sequence"]),
            models.Index(fields=["resource_type", "committed_at", "sequence"]),
        ]

    def __str__(self) -> str:
        return f"{self.resource_type} {self.resource_key} v{self.version}"


class Resource(models.Model):
    """The live version of one resource (a state, its ESA program or its citation record)."""

    resource_type = models.CharField(max_length=16, choices=ResourceType.choices)
    resource_key = models.CharField(max_length=2)
    current = models.ForeignKey(ResourceVersion, on_delete=models.PROTECT, related_name="+")

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["resource_type", "resource_key"], name="unique_resource"
            )
        ]

    def __str__(self) -> str:
        return f"{self.resource_type} {self.resource_key}"


class IndexCursor(models.Model):
    """Where the last reindex stopped: one row, locked for the length of a run."""

    name = models.CharField(max_length=32, unique=True, default="default")
    last_commit_sha = models.CharField(max_length=40, blank=True)
    # The state schema major the data repository follows at that commit (records/schemadecl.py).
    schema_version = models.CharField(max_length=8, default="1")
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return self.last_commit_sha or "(never indexed)"


class TrackedFile(models.Model):
    """The last blob reindex read at each path, so an unchanged file is never parsed again."""

    path = models.CharField(max_length=255, unique=True)
    blob_sha = models.CharField(max_length=40)
    valid = models.BooleanField()

    def __str__(self) -> str:
        return self.path


class ReindexProblem(models.Model):
    """A file that is invalid at the head of what was indexed. Cleared when a commit fixes it."""

    path = models.CharField(max_length=255, unique=True)
    commit_sha = models.CharField(max_length=40)
    schema_path = models.CharField(max_length=500, blank=True)
    message = models.TextField()
    detected_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.path} at {self.commit_sha[:12]}"


class ReindexOutcome(models.TextChoices):
    OK = "ok"
    # What was valid is published; some files are invalid at head (their last good versions
    # stay live).
    INVALID_FILES = "invalid_files"
    # The history was rewritten and the run was not allowed to go on.
    REFUSED = "refused"
    # An error stopped the run; it published nothing.
    FAILED = "failed"


class ReindexRun(models.Model):
    """What one run of reindex did. Reindex runs in its own process (at deploy, from a timer),
    so /metrics and the admin read its results from here."""

    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    outcome = models.CharField(max_length=16, choices=ReindexOutcome.choices)
    head = models.CharField(max_length=40, blank=True)
    commits_read = models.PositiveIntegerField(default=0)
    versions_published = models.PositiveIntegerField(default=0)
    # File versions found invalid in this run, and files invalid at head after it.
    invalid_versions = models.PositiveIntegerField(default=0)
    invalid_files = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)

    class Meta:
        indexes = [models.Index(fields=["-finished_at"], name="reindex_run_latest")]

    def __str__(self) -> str:
        return f"{self.outcome} at {self.finished_at:%Y-%m-%d %H:%M}"
