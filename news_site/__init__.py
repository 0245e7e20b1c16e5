"""The news aggregation service: Swedish AI summaries of vendor news."""
