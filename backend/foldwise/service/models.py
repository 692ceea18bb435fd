"""Every service model, imported in one place for Alembic and ``create_all``."""

from foldwise.service.db import Base
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.users.models import ApiToken, User

__all__ = ["ApiToken", "Base", "Document", "Folder", "User"]
