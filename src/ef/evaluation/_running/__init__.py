"""Running retrievers: adapters, the anyio runner, options, journals and the evaluation driver."""
