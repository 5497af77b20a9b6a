"""The distributions here are built and installed by test_plugin_install.py, never imported by
the test run itself (one of them is meant to fail on import)."""

collect_ignore_glob = ["*"]
