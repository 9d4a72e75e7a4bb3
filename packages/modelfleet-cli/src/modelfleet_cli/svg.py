"""Writing small SVG pictures by code, deterministically: the same drawing gives the same
bytes (no timestamps, no random ids, numbers rounded), so a picture kept in the repository
can be checked fresh like any generated file."""

from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

FONT = "font-family:DejaVu Sans,Verdana,Arial,sans-serif"


def _num(value: float) -> str:
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


@dataclass
class Svg:
    """An SVG document of `width` x `height` pixels, drawn element by element."""

    width: float
    height: float
    elements: list[str] = field(default_factory=list)
    patterns: list[str] = field(default_factory=list)

    def stripes(self, pattern_id: str, colour: str) -> None:
        """A fill `url(#pattern_id)`: `colour` with dark diagonal stripes over it."""
        self.patterns.append(
            f'<pattern id="{pattern_id}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{colour}"/>'
            '<rect width="2.5" height="6" fill="#000000" fill-opacity="0.45"/></pattern>'
        )

    def rect(
        self, x: float, y: float, w: float, h: float, fill: str, *, stroke: str = "none",
        rx: float = 0, title: str | None = None,
    ) -> None:  # fmt: skip
        attrs = (
            f'x="{_num(x)}" y="{_num(y)}" width="{_num(w)}" height="{_num(h)}" '
            f'fill="{fill}" stroke="{stroke}"' + (f' rx="{_num(rx)}"' if rx else "")
        )
        if title is None:
            self.elements.append(f"<rect {attrs}/>")
        else:
            self.elements.append(f"<rect {attrs}><title>{escape(title)}</title></rect>")

    def line(
        self, x1: float, y1: float, x2: float, y2: float, stroke: str = "#444", width: float = 1,
        *, arrow: bool = False, dashed: bool = False,
    ) -> None:  # fmt: skip
        extra = (' marker-end="url(#arrow)"' if arrow else "") + (
            ' stroke-dasharray="4 3"' if dashed else ""
        )
        self.elements.append(
            f'<line x1="{_num(x1)}" y1="{_num(y1)}" x2="{_num(x2)}" y2="{_num(y2)}" '
            f'stroke="{stroke}" stroke-width="{_num(width)}"{extra}/>'
        )

    def polyline(self, points: list[tuple[float, float]], stroke: str, width: float = 2) -> None:
        path = " ".join(f"{_num(x)},{_num(y)}" for x, y in points)
        self.elements.append(
            f'<polyline points="{path}" fill="none" stroke="{stroke}" '
            f'stroke-width="{_num(width)}"/>'
        )

    def circle(self, x: float, y: float, r: float, fill: str, title: str | None = None) -> None:
        body = f'<circle cx="{_num(x)}" cy="{_num(y)}" r="{_num(r)}" fill="{fill}"'
        if title is None:
            self.elements.append(body + "/>")
        else:
            self.elements.append(body + f"><title>{escape(title)}</title></circle>")

    def text(
        self, x: float, y: float, text: str, *, size: float = 12, anchor: str = "start",
        weight: str = "normal", fill: str = "#222", rotate: float = 0,
    ) -> None:  # fmt: skip
        turn = f' transform="rotate({_num(rotate)} {_num(x)} {_num(y)})"' if rotate else ""
        self.elements.append(
            f'<text x="{_num(x)}" y="{_num(y)}" font-size="{_num(size)}" '
            f'text-anchor="{anchor}" font-weight="{weight}" fill="{fill}"{turn}>'
            f"{escape(text)}</text>"
        )

    def render(self, title: str) -> str:
        """The document, with `title` for screen readers and tooltips."""
        head = (
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{_num(self.width)}" '
            f'height="{_num(self.height)}" viewBox="0 0 {_num(self.width)} '
            f'{_num(self.height)}" style={quoteattr(FONT)} role="img">'
        )
        defs = (
            '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" '
            'markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" '
            f'fill="#444"/></marker>{"".join(self.patterns)}</defs>'
        )
        body = "\n".join(self.elements)
        background = '<rect width="100%" height="100%" fill="white"/>'
        return f"{head}\n<title>{escape(title)}</title>\n{defs}\n{background}\n{body}\n</svg>\n"
