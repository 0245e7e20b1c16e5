"""The compliance data service: versioned state-by-state homeschool compliance records."""
