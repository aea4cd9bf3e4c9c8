"""An analysis as one self-contained HTML file to share: a summary by invariant, a sortable table of
findings, and each finding's ownership chain drawn as a small SVG diagram whose broken link stands out.

Everything the page needs is inline (CSS, a few lines of script, SVG): it fetches nothing, so it opens
from a mail attachment or a ticket on a machine with no network.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cache
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined

from tether.audit.analysis import Analysis
from tether.audit.chains import Box, Chain, chain_of
from tether.audit.findings import Finding, age_text

BOX_WIDTH, BOX_HEIGHT, GAP, MARGIN = 150, 52, 116, 6


@dataclass(frozen=True)
class PlacedBox:
    box: Box
    x: int
    y: int


@dataclass(frozen=True)
class PlacedLink:
    label: str
    broken: bool
    x1: int
    x2: int
    y: int


@dataclass(frozen=True)
class Drawing:
    width: int
    height: int
    boxes: list[PlacedBox]
    links: list[PlacedLink]
    broken: bool
    description: str  # the chain in words, for the SVG's accessible name


def drawing_of(chain: Chain) -> Drawing:
    """Boxes left to right, each link an arrow from a box to the next, its label above it."""
    boxes, links = [], []
    y = MARGIN + 16  # room for the labels above the arrows
    for position, box in enumerate(chain.boxes):
        boxes.append(PlacedBox(box, MARGIN + position * (BOX_WIDTH + GAP), y))
    for position, link in enumerate(chain.links):
        left = MARGIN + position * (BOX_WIDTH + GAP) + BOX_WIDTH
        links.append(PlacedLink(link.label, link.broken, left + 2, left + GAP - 4, y + BOX_HEIGHT // 2))
    count = len(chain.boxes)
    words = [f"{box.kind} {box.ident}" + (" (gone)" if box.missing else "") for box in chain.boxes]
    text = words[0] if words else ""
    for link, word in zip(chain.links, words[1:], strict=False):
        text += f" -[{link.label}{' BROKEN' if link.broken else ''}]-> {word}"
    return Drawing(width=2 * MARGIN + count * BOX_WIDTH + (count - 1) * GAP, height=y + BOX_HEIGHT + MARGIN,
                   boxes=boxes, links=links, broken=chain.broken, description=text)


@cache
def _environment() -> Environment:
    return Environment(loader=PackageLoader("tether.audit", "templates"), autoescape=True,
                       undefined=StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _row(number: int, finding: Finding, analysis: Analysis) -> dict[str, Any]:
    return {"number": number, "finding": finding,
            "drawing": drawing_of(chain_of(finding, analysis.collection.snapshot))}


def render_html(analysis: Analysis, *, schema: str) -> str:
    snapshot = analysis.collection.snapshot
    template = _environment().get_template("report.html.j2")
    return template.render(
        cloud=analysis.collection.cloud or "cloud",
        generated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(snapshot.now)),
        schema=schema,
        analysis=analysis,
        summary=analysis.by_invariant(),
        rows=[_row(number, finding, analysis) for number, finding in enumerate(analysis.findings, 1)],
        age_text=age_text,
        box=(BOX_WIDTH, BOX_HEIGHT),
    )
