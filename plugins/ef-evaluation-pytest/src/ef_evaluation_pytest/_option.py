"""The command-line option, named apart so that loading the plugin imports nothing of ef."""

UPDATE_OPTION = "--ef-update-baselines"
