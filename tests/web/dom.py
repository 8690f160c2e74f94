"""A small DOM built with the standard library's HTML parser, to read pages as a browser does.

Tests look elements up by tag and attributes and read their text: what a user sees, not the
markup's spelling. Attribute values come back unescaped, as a browser's DOM holds them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser

VOID = frozenset(
    {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
     "track", "wbr"}
)  # fmt: skip
# Inside these the parser keeps the text raw, and the first newline after the start tag of
# <pre> and <textarea> is not part of the content.
_DROPS_FIRST_NEWLINE = frozenset({"pre", "textarea"})


@dataclass
class Element:
    """One element: its tag, attributes, and children (elements and text pieces)."""

    tag: str
    attrs: dict[str, str]
    children: list[Element | str] = field(default_factory=list)
    parent: Element | None = field(default=None, repr=False)

    @property
    def text(self) -> str:
        """All the text inside, as `textContent` gives it."""
        return "".join(c if isinstance(c, str) else c.text for c in self.children)

    def classes(self) -> set[str]:
        """The element's classes."""
        return set(self.attrs.get("class", "").split())

    def iter(self) -> Iterator[Element]:
        """This element and every element inside it, in document order."""
        yield self
        for child in self.children:
            if isinstance(child, Element):
                yield from child.iter()

    def all(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> list[Element]:
        """Elements inside (this one included) with this tag, class and attribute values;
        `data_testid="x"` stands for `data-testid="x"`, a value of "*" for any value."""
        wanted = {name.replace("_", "-"): value for name, value in attrs.items()}
        return [
            el
            for el in self.iter()
            if (tag is None or el.tag == tag)
            and (cls is None or cls in el.classes())
            and all(
                name in el.attrs and (value == "*" or el.attrs[name] == value)
                for name, value in wanted.items()
            )
        ]

    def one(self, tag: str | None = None, cls: str | None = None, **attrs: str) -> Element:
        """The only element that matches; AssertionError when there are none or several."""
        found = self.all(tag, cls, **attrs)
        assert len(found) == 1, f"{len(found)} elements match {tag} {cls} {attrs}"
        return found[0]

    def testid(self, name: str) -> Element:
        """The only element with `data-testid=name`."""
        return self.one(data_testid=name)


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        element = Element(tag, {k: v or "" for k, v in attrs}, parent=self.current)
        self.current.children.append(element)
        if tag not in VOID:
            self.current = element

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.current.children.append(
            Element(tag, {k: v or "" for k, v in attrs}, parent=self.current)
        )

    def handle_endtag(self, tag: str) -> None:
        node: Element | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        if (
            self.current.tag in _DROPS_FIRST_NEWLINE
            and not self.current.children
            and data.startswith("\n")
        ):
            data = data[1:]
        if data:
            self.current.children.append(data)


def parse(html: str) -> Element:
    """The document's root element."""
    builder = _Builder()
    builder.feed(html)
    builder.close()
    return builder.root
