"""A parallel English/German folder corpus from the translation catalogs Django ships.

Django (a dev dependency) ships, per component, a German catalog
``django/<component>/locale/de/LC_MESSAGES/django.po``: every message in English (``msgid``)
and as a person translated it into German (``msgstr``). A component is a folder
(``("contrib", "admin")``, ``("core",)``); every run of ``per_document`` consecutive messages
of a catalog (they follow the source files, so they share a topic) is a document. The
English and the German corpus therefore have exactly the same shape: the same folders,
documents and message boundaries, only the language differs. Deterministic: no sampling here.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

from foldwise.core import FolderPath

_CATALOGS: dict[FolderPath, str] = {
    ("core",): "conf",
    ("contrib", "admin"): "contrib/admin",
    ("contrib", "admindocs"): "contrib/admindocs",
    ("contrib", "auth"): "contrib/auth",
    ("contrib", "humanize"): "contrib/humanize",
    ("contrib", "flatpages"): "contrib/flatpages",
    ("contrib", "gis"): "contrib/gis",
    ("contrib", "postgres"): "contrib/postgres",
}
_KEYWORD = re.compile(r'^(msgctxt|msgid|msgid_plural|msgstr(?:\[\d+\])?)\s+(".*")$')


@dataclass
class Message:
    """One catalog entry: its English and German text (plural forms joined)."""

    english: list[str] = field(default_factory=list)
    german: list[str] = field(default_factory=list)


def read_po(path: Path) -> list[tuple[str, str]]:
    """(English, German) of every translated message of a ``.po`` file, in file order."""
    messages: list[Message] = []
    current: Message | None = None
    target: list[str] | None = None
    for raw in path.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _KEYWORD.match(line)
        if match:
            keyword, literal = match.groups()
            if keyword in ("msgctxt", "msgid") and (current is None or current.german):
                current = Message()
                messages.append(current)
            assert current is not None
            target = (
                None
                if keyword == "msgctxt"
                else current.english
                if keyword.startswith("msgid")
                else current.german
            )
            if target is not None:
                target.append(ast.literal_eval(literal))
        elif line.startswith('"') and target is not None:
            target[-1] += ast.literal_eval(line)
    return [
        (" ".join(m.english), " ".join(m.german))
        for m in messages
        if "".join(m.english).strip() and "".join(m.german).strip()  # header, untranslated
    ]


@dataclass(frozen=True)
class ParallelCorpus:
    """Documents of both languages, aligned: ``english[i]`` and ``german[i]`` say the same."""

    english: list[str]
    german: list[str]
    truth: list[FolderPath]


def django_corpus(per_document: int = 4) -> ParallelCorpus:
    """The parallel corpus of Django's German catalogs (ImportError without Django)."""
    import django

    root = Path(django.__file__).parent
    english, german, truth = [], [], []
    for folder, catalog in _CATALOGS.items():
        pairs = read_po(root / catalog / "locale" / "de" / "LC_MESSAGES" / "django.po")
        for start in range(0, len(pairs) - per_document + 1, per_document):
            chunk = pairs[start : start + per_document]
            english.append("\n".join(e for e, _ in chunk))
            german.append("\n".join(g for _, g in chunk))
            truth.append(folder)
    return ParallelCorpus(english=english, german=german, truth=truth)
