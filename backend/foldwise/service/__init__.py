"""The Foldwise web service: FastAPI app, storage, users, documents, folders, imports, search.

The clustering core never imports this package; this package calls into the core.
"""
