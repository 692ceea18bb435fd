"""Every service model, imported in one place for Alembic and ``create_all``."""

from foldwise.service.critiques.models import Critique, CritiqueTriple, RejectedGroup, TreeState
from foldwise.service.db import Base
from foldwise.service.documents.models import Document
from foldwise.service.folders.models import Folder
from foldwise.service.recluster.jobs.models import ReclusterJob
from foldwise.service.recluster.tree.models import (
    DocumentSuggestion,
    PlacementModel,
    TreePlacement,
    TreeProposal,
    TreeVersion,
)
from foldwise.service.users.models import ApiToken, BrowserSession, User

__all__ = [
    "ApiToken",
    "Base",
    "BrowserSession",
    "Critique",
    "CritiqueTriple",
    "Document",
    "DocumentSuggestion",
    "Folder",
    "PlacementModel",
    "ReclusterJob",
    "RejectedGroup",
    "TreePlacement",
    "TreeProposal",
    "TreeState",
    "TreeVersion",
    "User",
]
