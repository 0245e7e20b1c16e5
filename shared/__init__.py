"""Code both Django projects use: settings helpers, HTTP plumbing, rate limits, safe fetching."""
