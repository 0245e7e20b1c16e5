"""Reference client of the Compliance Data Service: the safe way to sync its change feed
(full sync, then incremental with `sync_token`, cursors followed, `Retry-After` honoured, the
checkpoint written atomically) and the check of a webhook delivery's signature."""

from compliance_sync.checkpoint import Checkpoint, checkpoint_load, checkpoint_save
from compliance_sync.client import ApiError, ComplianceClient, SyncResult
from compliance_sync.webhooks import SignatureError, signature_header, verify_signature

__all__ = [
    "ApiError",
    "Checkpoint",
    "ComplianceClient",
    "SignatureError",
    "SyncResult",
    "checkpoint_load",
    "checkpoint_save",
    "signature_header",
    "verify_signature",
]
