"""The distributions here are built and installed by test_plugin_install.py and
test_plugin_isolation.py, never imported by the test run itself (some are meant to fail on
import, one even ends the process)."""

collect_ignore_glob = ["*"]
