"""Tesseract on one page of a scan: find the program, render the page, read it.

:func:`read_page` runs in the limited child of ``documents.sandbox`` (CPU and memory
rlimits, which the Tesseract process it starts inherits); the rest runs in the worker.
"""

from __future__ import annotations

import io
import logging
import math
import os
import shutil
import subprocess
from dataclasses import dataclass

from foldwise.service.documents.extract import MAX_IMAGE_PIXELS

log = logging.getLogger(__name__)

#: Scans are rendered at 300 dpi, the resolution Tesseract is trained for, unless the page
#: would then exceed ``MAX_IMAGE_PIXELS`` (a poster-sized PDF page).
_DPI = 300
#: Tesseract's language data: script detection, not a language.
_NOT_LANGUAGES = frozenset({"osd", "equ"})


#: Tesseract's names of the languages the core detects (core/_language.py).
TESSERACT_NAMES = {
    "en": "eng", "de": "deu", "fr": "fra", "es": "spa", "it": "ita", "nl": "nld",
    "pt": "por", "sv": "swe", "da": "dan", "no": "nor", "fi": "fin", "hu": "hun",
    "ro": "ron", "ru": "rus", "tr": "tur", "ca": "cat", "cs": "ces", "pl": "pol",
    "id": "ind", "el": "ell",
}  # fmt: skip


@dataclass(frozen=True)
class Tesseract:
    """An installed Tesseract: its program and the languages it reads, "+"-joined."""

    program: str
    languages: str

    def first(self, code: str) -> Tesseract | None:
        """This Tesseract reading the language of ISO code ``code`` first, if it has it and
        does not already: Tesseract reads letters its first language lacks less well
        ("Uberweisung" for "Überweisung" under "eng+deu")."""
        name = TESSERACT_NAMES.get(code)
        order = self.languages.split("+")
        if name is None or name not in order or order[0] == name:
            return None
        order.remove(name)
        return Tesseract(self.program, "+".join([name, *order]))


def find_tesseract(command: str, wanted: str) -> Tesseract | None:
    """The Tesseract of ``command`` with the ``wanted`` languages ("eng+deu") it has, or, if
    it has none of them, every language it has; ``None`` when it is missing or reads none."""
    program = shutil.which(command)
    if program is None:
        return None
    try:
        listed = subprocess.run(
            [program, "--list-langs"], capture_output=True, text=True, timeout=60, check=True
        ).stdout
    except (OSError, subprocess.SubprocessError) as exc:
        log.warning("Tesseract at %s does not answer: %s", program, exc)
        return None
    # The first line is a heading ("List of available languages in ...").
    installed = [
        line.strip() for line in listed.splitlines()[1:] if line.strip() not in _NOT_LANGUAGES
    ]
    chosen = [lang for lang in wanted.split("+") if lang in installed] or installed
    if not chosen:
        log.warning("Tesseract at %s has no language data", program)
        return None
    return Tesseract(program=program, languages="+".join(chosen))


def _pdf_page(data: bytes, page: int) -> object:
    import pypdfium2 as pdfium

    document = pdfium.PdfDocument(data)
    try:
        width, height = document[page].get_size()  # points (1/72 inch)
        scale = _DPI / 72
        if width * height * scale**2 > MAX_IMAGE_PIXELS:
            scale = math.sqrt(MAX_IMAGE_PIXELS / (width * height))
        return document[page].render(scale=scale, grayscale=True).to_pil()
    finally:
        document.close()


def _image_page(data: bytes, page: int) -> object:
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS  # extraction checked it; a guard all the same
    with Image.open(io.BytesIO(data)) as image:
        image.seek(page)
        return image.convert("L")  # a copy, decoded: usable after the file is closed


def read_page(
    data: bytes, filename: str, media_type: str, page: int, tesseract: Tesseract, timeout: int
) -> str:
    """The text Tesseract reads on page ``page`` (0-based) of a scan.

    Parameters
    ----------
    data, filename, media_type
        The stored file: an image (PNG, JPEG, TIFF; a TIFF page is a frame) or a PDF.
    timeout
        Seconds after which Tesseract is stopped (its CPU rlimit stops it too).
    """
    import pytesseract

    # One thread per Tesseract: the worker runs one page at a time, on a shared machine.
    os.environ["OMP_THREAD_LIMIT"] = "1"
    pytesseract.pytesseract.tesseract_cmd = tesseract.program
    image = _pdf_page(data, page) if media_type == "application/pdf" else _image_page(data, page)
    try:
        text = pytesseract.image_to_string(image, lang=tesseract.languages, timeout=timeout)
    except RuntimeError as exc:  # pytesseract's timeout
        raise RuntimeError(f"{filename!r} page {page + 1}: Tesseract timed out") from exc
    return str(text)
