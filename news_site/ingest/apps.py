from django.apps import AppConfig
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop, pgettext_lazy
from django_tasks_db.apps import TasksAppConfig


class IngestConfig(AppConfig):
    name = "news_site.ingest"
    label = "ingest"
    verbose_name = "Ingest"


class TaskResultsConfig(TasksAppConfig):
    """django_tasks_db under a name the editors read: its own ("Tasks Database Backend") is an
    untranslated literal, shown as a section of the Swedish admin."""

    # Upstream's attribute is inferred as str; Django reads a lazy text here as everywhere.
    verbose_name = _("Background tasks")  # type: ignore[assignment]


# Texts of the task results' admin pages that django_tasks and django_tasks_db mark for
# translation but ship no Swedish for: listed here so that makemessages puts them in the news
# catalogue, which translates them wherever those packages show them.
TASK_RESULT_TEXTS = (
    gettext_noop("Task Result"),
    gettext_noop("Task Results"),
    gettext_noop("args kwargs"),
    gettext_noop("backend name"),
    gettext_noop("enqueued at"),
    gettext_noop("exception class path"),
    gettext_noop("finished at"),
    gettext_noop("priority"),
    gettext_noop("queue name"),
    gettext_noop("return value"),
    gettext_noop("run after"),
    gettext_noop("started at"),
    gettext_noop("task path"),
    gettext_noop("traceback"),
    gettext_noop("worker id"),
    pgettext_lazy("Task", "Ready"),
    pgettext_lazy("Task", "Running"),
    pgettext_lazy("Task", "Failed"),
    pgettext_lazy("Task", "Successful"),
)
