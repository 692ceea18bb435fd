"""Text extraction from txt, md, html, pdf, docx and eml with well-kept libraries.

Images (PNG, JPEG, TIFF) and PDFs without a text layer carry no text to extract: they are
checked here (Pillow and pypdf, in the limited child) and their pages counted, and the OCR
task reads them later (foldwise.service.ocr, docs/ocr.md).

Every failure is a client error: ``UnsupportedTypeError`` (415) for file types Foldwise does
not read,
``InvalidInputError`` (422) for corrupt, encrypted or empty files.
"""

from __future__ import annotations

import email
import email.policy
import io
import logging
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from email.message import EmailMessage
from pathlib import PurePosixPath

from bs4 import BeautifulSoup

from foldwise.service.documents import sandbox
from foldwise.service.errors import InvalidInputError, UnsupportedTypeError

MEDIA_TYPES = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".html": "text/html",
    ".htm": "text/html",
    ".pdf": "application/pdf",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".eml": "message/rfc822",
    ".png": "image/png",
    ".jpg": "image/jpeg",
    ".jpeg": "image/jpeg",
    ".tif": "image/tiff",
    ".tiff": "image/tiff",
}
IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/tiff"})
#: An image (or a TIFF page) of more pixels than this is refused: Pillow would need about
#: 4 bytes a pixel, and Tesseract more (an A4 page at 600 dpi is 35 million pixels).
MAX_IMAGE_PIXELS = 60_000_000
#: Pages of a scan that are OCRed; a longer scan is refused rather than read for an hour.
MAX_OCR_PAGES = 200
#: HTML and e-mail up to this size are parsed in-process (bounded work), larger in the child.
_IN_PROCESS_MAX_BYTES = 256 * 1024
#: A PDF stream may inflate to 40 times the file's size (and to 8 MB whatever the size).
_PDF_MAX_INFLATION = 40
_PDF_MIN_INFLATED = 8 << 20
_BY_MEDIA_TYPE = {v: k for k, v in reversed(MEDIA_TYPES.items())}
SUPPORTED = ", ".join(sorted(MEDIA_TYPES))
# A docx is a zip; refuse ones that would inflate beyond this (docx bombs).
_DOCX_MAX_UNPACKED = 200 * 1024 * 1024


@dataclass(frozen=True)
class Extracted:
    """What extraction found: the text, a title if the file names one, the media type."""

    text: str
    title: str | None
    media_type: str
    #: Pages to OCR: more than 0 for an image or a PDF without a text layer (``text`` is "").
    ocr_pages: int = 0


def suffix_for(filename: str, media_type: str | None = None) -> str:
    """The supported suffix of ``filename`` (or ``media_type``); else ``UnsupportedTypeError``."""
    suffix = PurePosixPath(filename).suffix.lower()
    if suffix in MEDIA_TYPES:
        return suffix
    base_type = (media_type or "").split(";")[0].strip().lower()
    if not suffix and base_type in _BY_MEDIA_TYPE:
        return _BY_MEDIA_TYPE[base_type]
    raise UnsupportedTypeError(f"unsupported file type {filename!r}; supported: {SUPPORTED}")


def is_supported(filename: str) -> bool:
    """Whether Foldwise reads files named like ``filename``."""
    return PurePosixPath(filename).suffix.lower() in MEDIA_TYPES


def _decode_text(data: bytes, filename: str) -> str:
    if b"\x00" in data[:8192]:
        raise InvalidInputError(f"{filename!r} looks binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        # Old text files are often Windows-1252; cp1252 rejects a few bytes, so a file that
        # is neither is reported rather than silently garbled.
        try:
            return data.decode("cp1252")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(f"{filename!r} is neither UTF-8 nor Windows-1252 text") from exc


def _html(data: bytes, filename: str) -> tuple[str, str | None]:
    soup = BeautifulSoup(data, "html.parser")
    title = soup.title.get_text(" ", strip=True) if soup.title else None
    for tag in soup(["script", "style", "noscript", "template"]):
        tag.decompose()
    if soup.title:
        soup.title.decompose()
    return soup.get_text("\n", strip=True), title or None


def _pdf(data: bytes, filename: str) -> tuple[str, str | None, int]:
    """Text, title and page count of a PDF. Run it in ``sandbox``: PDFs can hold bombs."""
    from pypdf import PdfReader, apply_configuration
    from pypdf.errors import PyPdfError

    # pypdf logs warnings for every quirk of real-world files; they are not our errors.
    logging.getLogger("pypdf").setLevel(logging.ERROR)
    # An honest PDF's streams inflate a few times over; a bomb's, hundreds of times.
    inflated_limit = max(_PDF_MIN_INFLATED, _PDF_MAX_INFLATION * len(data))
    try:
        with apply_configuration(
            zlib_maximum_output_length=inflated_limit,
            lzw_maximum_output_length=inflated_limit,
            run_length_maximum_output_length=inflated_limit,
            brotli_maximum_output_length=inflated_limit,
        ):
            reader = PdfReader(io.BytesIO(data), strict=False)
            if reader.is_encrypted:
                raise InvalidInputError(f"{filename!r} is an encrypted PDF")
            text = "\n".join(page.extract_text() or "" for page in reader.pages)
            title = reader.metadata.title if reader.metadata else None
            pages = len(reader.pages)
    except InvalidInputError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, AttributeError, OSError) as exc:
        raise InvalidInputError(f"{filename!r} is not a readable PDF: {exc}") from exc
    return text, title if isinstance(title, str) else None, pages


def _image(data: bytes, filename: str) -> int:
    """Check an image and count its pages (TIFF frames); run it in ``sandbox``."""
    from PIL import Image, UnidentifiedImageError

    Image.MAX_IMAGE_PIXELS = MAX_IMAGE_PIXELS  # larger: DecompressionBombError (refused)
    try:
        with Image.open(io.BytesIO(data)) as image:
            if image.format not in ("PNG", "JPEG", "TIFF", "MPO"):
                raise InvalidInputError(f"{filename!r} is {image.format}, not PNG, JPEG or TIFF")
            pages = _check_pages(getattr(image, "n_frames", 1), filename)
            for page in range(pages):
                image.seek(page)
                if image.width * image.height > MAX_IMAGE_PIXELS:
                    raise InvalidInputError(
                        f"{filename!r} page {page + 1} has {image.width}x{image.height} "
                        f"pixels; the limit is {MAX_IMAGE_PIXELS}"
                    )
                image.load()  # decodes: a truncated or corrupt file fails here, not in OCR
    except InvalidInputError:
        raise
    except Image.DecompressionBombError as exc:
        raise InvalidInputError(f"{filename!r} has too many pixels: {exc}") from exc
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError, EOFError) as exc:
        raise InvalidInputError(f"{filename!r} is not a readable image: {exc}") from exc
    return int(pages)


def _check_pages(pages: int, filename: str) -> int:
    if pages > MAX_OCR_PAGES:
        raise InvalidInputError(
            f"{filename!r} is a scan of {pages} pages; at most {MAX_OCR_PAGES} are read"
        )
    return pages


def _docx(data: bytes, filename: str) -> tuple[str, str | None]:
    import docx

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            if sum(i.file_size for i in archive.infolist()) > _DOCX_MAX_UNPACKED:
                raise InvalidInputError(
                    f"{filename!r} unpacks to more than {_DOCX_MAX_UNPACKED} bytes"
                )
        document = docx.Document(io.BytesIO(data))
    except InvalidInputError:
        raise
    except (zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InvalidInputError(f"{filename!r} is not a readable .docx file: {exc}") from exc
    except Exception as exc:  # python-docx raises its own PackageNotFoundError and lxml errors
        raise InvalidInputError(f"{filename!r} is not a readable .docx file: {exc}") from exc
    parts = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            parts.append("\t".join(cell.text for cell in row.cells))
    return "\n".join(parts), document.core_properties.title or None


def _eml(data: bytes, filename: str) -> tuple[str, str | None]:
    message = email.message_from_bytes(data, policy=email.policy.default)
    if not isinstance(message, EmailMessage) or not (message.keys() or message.get_payload()):
        raise InvalidInputError(f"{filename!r} is not an e-mail message")
    body = message.get_body(preferencelist=("plain", "html"))
    text = ""
    if body is not None:
        try:
            content = body.get_content()
        except (LookupError, ValueError) as exc:
            raise InvalidInputError(f"{filename!r}: cannot decode the message body: {exc}") from exc
        if body.get_content_type() == "text/html":
            content = BeautifulSoup(content, "html.parser").get_text("\n", strip=True)
        text = content
    header = "\n".join(
        f"{k}: {message[k]}" for k in ("From", "To", "Date", "Subject") if message[k]
    )
    subject = str(message["Subject"]) if message["Subject"] else None
    return (f"{header}\n\n{text}" if text.strip() else ""), subject


def _bounded(
    parse: Callable[[bytes, str], tuple[str, str | None]], data: bytes, filename: str
) -> tuple[str, str | None]:
    """Parse HTML or e-mail in-process when small (their work grows with their size, and a
    child costs ~35 ms), in the limited child when large. PDF and .docx always go to the
    child: a small one can hold a bomb."""
    if len(data) <= _IN_PROCESS_MAX_BYTES:
        return parse(data, filename)
    return sandbox.run_parser(parse, data, filename)


def extract(data: bytes, filename: str, media_type: str | None = None) -> Extracted:
    """Extract text and title from the bytes of a file called ``filename``."""
    suffix = suffix_for(filename, media_type)
    if not data:
        raise InvalidInputError(f"{filename!r} is empty")
    title: str | None = None
    pages = 0
    if suffix in (".txt", ".text", ".md", ".markdown"):
        text = _decode_text(data, filename)
    elif suffix in (".html", ".htm"):
        text, title = _bounded(_html, data, filename)
    elif MEDIA_TYPES[suffix] in IMAGE_TYPES:
        pages = sandbox.run_limited(_image, data, filename)
        return Extracted(text="", title=None, media_type=MEDIA_TYPES[suffix], ocr_pages=pages)
    elif suffix == ".pdf":
        text, title, pages = sandbox.run_limited(_pdf, data, filename)
    elif suffix == ".docx":
        text, title = sandbox.run_parser(_docx, data, filename)
    else:
        text, title = _bounded(_eml, data, filename)
    text = text.replace("\x00", "")  # PostgreSQL text cannot hold NUL
    # A title read from the file may hold NUL too (PDF metadata, an e-mail subject).
    title = re.sub(r"\s+", " ", title.replace("\x00", "")).strip() if title else None
    if not text.strip() and suffix == ".pdf" and pages > 0:
        # No text layer: a scan. Its pages are OCRed by the worker.
        ocr_pages = _check_pages(pages, filename)
        return Extracted("", title or None, MEDIA_TYPES[suffix], ocr_pages=ocr_pages)
    if not text.strip():
        raise InvalidInputError(f"no text could be extracted from {filename!r}")
    return Extracted(text=text, title=title or None, media_type=MEDIA_TYPES[suffix])
