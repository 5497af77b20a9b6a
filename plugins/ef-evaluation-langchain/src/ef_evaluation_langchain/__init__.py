"""ef-evaluation plugin: evaluate LangChain retrievers.

Adapts any ``langchain_core.retrievers.BaseRetriever`` (async ``ainvoke`` on asyncio, sync
``invoke`` in worker threads elsewhere) and maps ``Document`` results to source doc ids.

Loading the plugin imports nothing of LangChain: an object can only be a LangChain retriever or
document if ``langchain_core`` was imported already, so the hooks look there first.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import attrs

from ef.evaluation import hookimpl

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

__all__ = ["LangChainRetriever", "document_id"]


@attrs.frozen
class LangChainRetriever:
    """A LangChain retriever whose doc ids live in ``document.metadata[id_key]``.

    :param retriever: the LangChain retriever.
    :param id_key: the metadata key holding the doc id; ``None`` uses ``Document.id``.
    """

    retriever: BaseRetriever
    id_key: str | None = None

    @property
    def retriever_id(self) -> str:
        """The identity used in journal fingerprints: the wrapped retriever's class and key."""
        inner = type(self.retriever)
        return f"{inner.__module__}.{inner.__qualname__} id_key={self.id_key}"


def document_id(document: Document, id_key: str | None = None) -> str:
    """The source doc id of ``document``: ``metadata[id_key]``, or ``Document.id``.

    :raises ValueError: when the document carries no such id.
    """
    value = document.metadata.get(id_key) if id_key is not None else document.id
    if value is None or value == "":
        where = f"metadata[{id_key!r}]" if id_key is not None else "Document.id"
        raise ValueError(
            f"a LangChain Document has no {where} (content: {document.page_content[:60]!r}); "
            "set it, or wrap the retriever in LangChainRetriever(retriever, id_key=...)"
        )
    return str(value)


def _on_asyncio() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _search(retriever: BaseRetriever, id_key: str | None) -> Callable[..., Any]:
    async def search(query: str, *, limit: int = 10) -> Sequence[Any]:
        if _on_asyncio():
            documents = await retriever.ainvoke(query)
        else:
            import anyio.to_thread

            # LangChain's async path needs asyncio; elsewhere its sync path runs in a thread.
            documents = await anyio.to_thread.run_sync(
                retriever.invoke, query, abandon_on_cancel=True
            )
        documents = documents[:limit]
        if id_key is None:
            return documents
        return [document_id(document, id_key) for document in documents]

    return search


@hookimpl
def ef_evaluation_adapt_retriever(retriever: Any) -> Callable[..., Any] | None:
    """LangChain retrievers, bare or wrapped in :class:`LangChainRetriever`."""
    if isinstance(retriever, LangChainRetriever):
        return _search(retriever.retriever, retriever.id_key)
    module = sys.modules.get("langchain_core.retrievers")
    if module is not None and isinstance(retriever, module.BaseRetriever):
        return _search(retriever, None)
    return None


@hookimpl
def ef_evaluation_doc_id_getter(result_type: type) -> Callable[[Any], str] | None:
    """``Document`` results map to ``Document.id``."""
    module = sys.modules.get("langchain_core.documents")
    if module is not None and issubclass(result_type, module.Document):
        return document_id
    return None
