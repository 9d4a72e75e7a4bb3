"""How the timeline picture tells phases apart: each phase a colour of the Okabe-Ito palette
(told apart by colour-blind readers too), and, as there are more phases than its 8 colours, a
phase that shares its colour with another is striped, so that no two phases look the same.
Phases that belong together share a colour: a replica waiting for its cache is a striped
Pending, one waiting for its cluster a striped NotReady."""

import zlib
from dataclasses import dataclass

OKABE_ITO = {
    "black": "#000000",
    "orange": "#E69F00",
    "sky blue": "#56B4E9",
    "bluish green": "#009E73",
    "yellow": "#F0E442",
    "blue": "#0072B2",
    "vermillion": "#D55E00",
    "reddish purple": "#CC79A7",
}
UNUSED_GREY = "#DDDDDD"  # a deployment's cluster it did not need: no colour, on purpose


@dataclass(frozen=True)
class Style:
    colour: str
    striped: bool = False

    def pattern_id(self) -> str:
        """The id of the SVG pattern a striped style fills with."""
        return f"stripes-{self.colour.removeprefix('#')}"

    def fill(self) -> str:
        return f"url(#{self.pattern_id()})" if self.striped else self.colour


STYLES = {
    "Ready": Style(OKABE_ITO["bluish green"]),
    "Progressing": Style(OKABE_ITO["blue"]),
    "Hydrating": Style(OKABE_ITO["sky blue"]),
    "Pending": Style(OKABE_ITO["yellow"]),
    "WaitingForCache": Style(OKABE_ITO["yellow"], striped=True),
    "NotReady": Style(OKABE_ITO["orange"]),
    "WaitingForCluster": Style(OKABE_ITO["orange"], striped=True),
    "Unschedulable": Style(OKABE_ITO["reddish purple"]),
    "Degraded": Style(OKABE_ITO["vermillion"]),
    "Failed": Style(OKABE_ITO["black"]),
    "Unused": Style(UNUSED_GREY),
}
# A ModelService's backends, left to right in its row, in the order they are first seen:
# greys, as no phase is grey but Unused (which no ModelService row shows).
BACKEND_SHADES = ("#333333", "#A6A6A6", "#6B6B6B", "#D0D0D0")


def style_of(phase: str) -> Style:
    """A phase's style; one not listed gets a striped grey of its own, from its name."""
    if phase in STYLES:
        return STYLES[phase]
    shade = 120 + zlib.crc32(phase.encode()) % 100
    return Style(f"#{shade:02X}{shade:02X}{shade:02X}", striped=True)


def backend_shade(index: int) -> str:
    return BACKEND_SHADES[index % len(BACKEND_SHADES)]
