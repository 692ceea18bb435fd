"""Request and response bodies of the folders domain."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from foldwise.service.inputs import RowId

FOLDER_NAME_MAX = 255


class FolderCreate(BaseModel):
    """A new folder; no ``parent_id`` means top level."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1, max_length=FOLDER_NAME_MAX)
    parent_id: RowId | None = None


class FolderUpdate(BaseModel):
    """Rename and/or move. Sending ``"parent_id": null`` moves the folder to the top level;
    leaving ``parent_id`` out keeps it where it is."""

    model_config = ConfigDict(extra="forbid")

    name: str | None = Field(default=None, min_length=1, max_length=FOLDER_NAME_MAX)
    parent_id: RowId | None = None


class FolderRead(BaseModel):
    """A folder with its path from the top ("a/b/c")."""

    model_config = ConfigDict(from_attributes=True)

    id: int
    name: str
    parent_id: int | None
    path: str
    created_at: datetime
    updated_at: datetime


class DocumentBrief(BaseModel):
    """A document as listed in the tree: enough to show and open it."""

    id: int
    title: str


class TreeNode(BaseModel):
    """A folder of the tree with its subfolders and the number of documents directly in it."""

    id: int
    name: str
    parent_id: int | None
    document_count: int
    documents: list[DocumentBrief] | None = None
    children: list[TreeNode] = Field(default_factory=list)


class Tree(BaseModel):
    """The user's whole hierarchy. ``documents`` lists are filled on request only."""

    folders: list[TreeNode]
    folder_count: int
    document_count: int
    unfiled_count: int
    unfiled: list[DocumentBrief] | None = None


class FolderDeleted(BaseModel):
    """What deleting a folder did."""

    folders_deleted: int
    documents_unfiled: int
