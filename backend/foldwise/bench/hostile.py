"""Hostile files for the extraction limits (tests and ``bench/extract_limits.py``)."""

from __future__ import annotations

import zlib

TEXT_OPERATORS = b"BT /F1 12 Tf (Hello world) Tj ET "


def inflating_pdf(inflated_bytes: int, operators: bytes = TEXT_OPERATORS) -> bytes:
    """A valid one-page PDF whose content stream, ``operators`` repeated, inflates to about
    ``inflated_bytes`` from a few hundred times fewer stored bytes (FlateDecode)."""
    stream = zlib.compress(operators * max(1, inflated_bytes // len(operators)), 9)
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d /Filter /FlateDecode >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)
