"""pymongo (synchronous API) as the driver under test."""
