"""Talking to MLflow: its client imported on first use, every request bounded in time and never
retried, every failure one error that names the tracking URI.

MLflow retries a failed request up to 7 times with exponential backoff and waits 120 s for each
answer by default, so an unreachable tracking server would hold a command for many minutes.
While ef talks to it, MLflow's own settings are set to ``timeout`` seconds per request and no
retry (``MLFLOW_HTTP_REQUEST_TIMEOUT``, ``MLFLOW_HTTP_REQUEST_MAX_RETRIES``,
``MLFLOW_ARTIFACT_UPLOAD_DOWNLOAD_TIMEOUT``), and put back afterwards: a refused connection
fails at once, a server that never answers within ``timeout`` seconds.
"""

from __future__ import annotations

import contextlib
import io
import os
import threading
from collections.abc import Iterator
from typing import Any

from ef.evaluation import EvaluationError, redact_url

__all__ = [
    "DEFAULT_TIMEOUT",
    "ENV_TIMEOUT",
    "ReportNotFoundError",
    "TrackingError",
    "bounded_requests",
    "mlflow_client",
    "request_timeout",
    "tracking_failure",
]

DEFAULT_TIMEOUT = 30
"""Seconds one request to the tracking server may take by default."""
ENV_TIMEOUT = "EF_EVALUATION_MLFLOW_TIMEOUT"
"""The environment variable that sets those seconds (``--mlflow-timeout`` sets it too)."""

_SETTINGS = (
    "MLFLOW_HTTP_REQUEST_TIMEOUT",
    "MLFLOW_ARTIFACT_UPLOAD_DOWNLOAD_TIMEOUT",
    "MLFLOW_HTTP_REQUEST_MAX_RETRIES",
    "MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR",
)
_settings_lock = threading.Lock()


class TrackingError(EvaluationError, ConnectionError):
    """The MLflow tracking server could not be reached, or refused what was sent: the message
    names its URI, the time each request was given, and where the report was kept."""


class ReportNotFoundError(EvaluationError, FileNotFoundError):
    """No such MLflow run, or a run that holds no report logged by ef."""


def request_timeout(timeout: int | None = None) -> int:
    """The seconds each request may take: ``timeout``, else ``EF_EVALUATION_MLFLOW_TIMEOUT``,
    else :data:`DEFAULT_TIMEOUT` (MLflow counts whole seconds).

    :raises ValueError: naming the variable or the value, for anything but an integer >= 1.

    >>> request_timeout(5)
    5
    """
    if timeout is None:
        raw = os.environ.get(ENV_TIMEOUT, "").strip()
        if not raw:
            return DEFAULT_TIMEOUT
        if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:
            raise ValueError(f"{ENV_TIMEOUT} must be a whole number of seconds >= 1, got {raw!r}")
        return int(raw)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or timeout < 1:
        raise ValueError(f"timeout must be a whole number of seconds >= 1, got {timeout!r}")
    return timeout


@contextlib.contextmanager
def bounded_requests(timeout: int) -> Iterator[None]:
    """MLflow's requests in the block: ``timeout`` seconds each, no retry (the settings are
    put back afterwards; one block at a time in a process). MLflow's progress bars are off and
    the lines it prints (links to the run, which ``log_report`` returns) are dropped:
    standard output is the program's."""
    with _settings_lock, contextlib.redirect_stdout(io.StringIO()):
        saved = {name: os.environ.get(name) for name in _SETTINGS}
        os.environ["MLFLOW_HTTP_REQUEST_TIMEOUT"] = str(timeout)
        os.environ["MLFLOW_ARTIFACT_UPLOAD_DOWNLOAD_TIMEOUT"] = str(timeout)
        os.environ["MLFLOW_HTTP_REQUEST_MAX_RETRIES"] = "0"
        os.environ["MLFLOW_ENABLE_ARTIFACTS_PROGRESS_BAR"] = "false"
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


def mlflow_client(tracking_uri: str | None) -> tuple[Any, str]:
    """An ``MlflowClient`` for ``tracking_uri`` (``None``: MLflow's own choice, from
    ``MLFLOW_TRACKING_URI``), and the URI it talks to.

    :raises ImportError: without MLflow's client (``mlflow-skinny``).
    """
    try:
        from mlflow.tracking import MlflowClient
    except ImportError as error:  # pragma: no cover - a dependency of the distribution
        raise ImportError(
            "logging to MLflow needs its client: pip install mlflow-skinny (or mlflow)"
        ) from error
    client = MlflowClient(tracking_uri=tracking_uri)
    return client, str(client.tracking_uri)


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _reason(error: BaseException, timeout: int) -> str:
    """What went wrong, in a few words where the cause is a known network failure."""
    names = [type(each).__name__ for each in _chain(error)]
    if any(name in ("ReadTimeout", "ConnectTimeout", "Timeout", "TimeoutError") for name in names):
        return f"no answer within {timeout} s"
    if "ConnectionError" in names or "NewConnectionError" in names:
        refused = any("refused" in str(each).lower() for each in _chain(error))
        return "the connection was refused" if refused else "no connection could be made"
    text = " ".join(str(error).split())
    return text if len(text) <= 400 else text[:399] + "…"


def tracking_failure(
    uri: str, timeout: int, doing: str, error: BaseException, kept: str | None = None
) -> TrackingError:
    """The error for ``error``, raised while ``doing`` something with the server at ``uri``.

    :param kept: where the report was written before anything was sent, if it was.
    """
    message = (
        f"could not {doing} at the MLflow tracking server {redact_url(uri)}: "
        f"{_reason(error, timeout)} (each request waits at most {timeout} s and is not "
        f"retried; {ENV_TIMEOUT} or --mlflow-timeout sets the seconds)"
    )
    if kept is not None:
        message += f"; the report (report.json) and its files are kept in {kept}"
    return TrackingError(message)
