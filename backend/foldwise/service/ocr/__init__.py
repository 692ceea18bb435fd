"""OCR of scanned documents (images, PDFs without a text layer) in the worker (docs/ocr.md)."""
