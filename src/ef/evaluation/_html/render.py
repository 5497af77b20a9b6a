"""Pages from templates: Jinja2 fills them, Vega-Lite's JavaScript is inlined into each.

A page is one file that opens from disk with the network off: its style, its script, the
charting library and its data are all inside it, and nothing refers to another address. Jinja2
and vl-convert (which carries Vega, Vega-Lite and vega-embed as one offline bundle) are the
``html`` extra, imported only when a page is written.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from importlib import resources
from typing import Any

__all__ = ["page_json", "render_page", "vega_bundle"]

_EXTRA = "pip install 'ef-evaluation[html]'"
_END_OF_SCRIPT = re.compile(r"</(script)", re.IGNORECASE)


def _missing(name: str, error: ImportError) -> ImportError:
    return ImportError(f"an HTML report needs {name}: {_EXTRA}")


def _inline(script: str) -> str:
    """``script`` safe inside a ``<script>`` element, where only ``</script`` (in any case) would
    end the element early: written ``<\\/script``, which JavaScript reads the same.

    >>> _inline('s = "</ScRiPt>";')
    's = "<\\\\/ScRiPt>";'
    """
    return _END_OF_SCRIPT.sub(r"<\\/\1", script)


_SNIPPET = "window.vegaEmbed = vegaEmbed;"


@functools.cache
def vega_bundle() -> str:
    """Vega, Vega-Lite and vega-embed as one offline ES module that sets ``window.vegaEmbed``.

    Built once per vl-convert version and kept in a user cache folder
    (:mod:`ef.evaluation._html.bundle_cache`; ``EF_EVALUATION_CACHE`` names another, or none).

    :raises ImportError: naming the ``html`` extra when vl-convert is not installed.
    """
    try:
        import vl_convert
    except ImportError as error:
        raise _missing("vl-convert-python", error) from error
    from importlib import metadata

    from ef.evaluation._html.bundle_cache import cached_bundle

    version = metadata.version("vl-convert-python")
    snippet = hashlib.sha256(_SNIPPET.encode()).hexdigest()[:12]

    def build() -> str:
        return _inline(vl_convert.javascript_bundle(snippet=_SNIPPET))

    return cached_bundle(f"vega-bundle-vl-convert-{version}-{snippet}", build)


def page_json(data: Any) -> str:
    """``data`` as JSON safe inside a ``<script type="application/json">`` element.

    >>> page_json({'text': '</script><b>&'})
    '{"text":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(data, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _asset(name: str) -> str:
    return resources.files("ef.evaluation._html").joinpath("templates", name).read_text("utf-8")


def render_page(data: dict[str, Any]) -> str:
    """The HTML of one page from its data (``data["kind"]`` chooses the template).

    :raises ImportError: naming the ``html`` extra when Jinja2 or vl-convert is missing.
    """
    try:
        import jinja2
        from markupsafe import Markup
    except ImportError as error:
        raise _missing("jinja2", error) from error
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("ef.evaluation._html", "templates"),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        keep_trailing_newline=True,
    )
    template = environment.get_template(f"{data['kind']}.html.j2")
    return template.render(
        data=data,
        data_json=Markup(page_json(data)),
        style=Markup(_asset("style.css")),
        script=Markup(_inline(_asset("page.js"))),
        vega=Markup(vega_bundle()),
    )
