"""django-filter FilterSets of /api/v1 lists."""

import django_filters

from news_site.news.models import Story, StoryStatus


class StoryFilter(django_filters.FilterSet):
    status = django_filters.ChoiceFilter(choices=StoryStatus.choices)

    class Meta:
        model = Story
        fields = ["status"]
