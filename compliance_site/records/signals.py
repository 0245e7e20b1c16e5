"""What reindex tells the apps above records, which it does not import."""

from django.dispatch import Signal

# Sent once per state whose published version changed in a run, inside the run's transaction,
# with `state_abbreviation`, `verified_on` (the version's last_verified_at, a date) and
# `version`.
state_verified = Signal()

# Sent once per run that published change events, inside the run's transaction, with
# `last_sequence` (the highest sequence published). Webhooks fan out from it after the commit.
changes_published = Signal()
