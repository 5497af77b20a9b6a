"""Files: dataset, run and qrels formats, bundled datasets, and atomic writes."""
