"""Stored sentence embeddings of entries (title and summaries), for semantic search."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from news_site.news.models import Entry


class EntryEmbedding(models.Model):
    entry = models.OneToOneField(
        Entry,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="embedding",
        verbose_name=_("article"),
    )
    # The model that wrote the vector; a different configured model re-embeds everything.
    model_name = models.CharField(max_length=200, verbose_name=_("model"))
    # float32 values, L2-normalised, so a dot product is the cosine similarity.
    vector = models.BinaryField(verbose_name=_("vector"))
    updated_at = models.DateTimeField(
        default=timezone.now, db_index=True, verbose_name=_("updated")
    )

    class Meta:
        verbose_name = _("article vector")
        verbose_name_plural = _("article vectors")

    def __str__(self) -> str:
        return f"embedding of {self.entry_id}"
