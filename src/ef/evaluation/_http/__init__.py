"""HTTP retrievers: HttpRetriever, its authentication and its client libraries."""
