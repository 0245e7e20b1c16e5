"""Stored sentence embeddings of entries (title and summaries), for semantic search."""

from django.db import models
from django.utils import timezone

from news_site.news.models import Entry


class EntryEmbedding(models.Model):
    entry = models.OneToOneField(
        Entry,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="embedding",
        verbose_name="artikel",
    )
    # The model that wrote the vector; a different configured model re-embeds everything.
    model_name = models.CharField(max_length=200, verbose_name="modell")
    # float32 values, L2-normalised, so a dot product is the cosine similarity.
    vector = models.BinaryField(verbose_name="vektor")
    updated_at = models.DateTimeField(
        default=timezone.now, db_index=True, verbose_name="uppdaterad"
    )

    class Meta:
        verbose_name = "artikelvektor"
        verbose_name_plural = "artikelvektorer"

    def __str__(self) -> str:
        return f"embedding of {self.entry_id}"
