"""Dependencies shared by every router: settings, the DB session and the calling user."""

from foldwise.service.config import SettingsDep, get_settings
from foldwise.service.db import SessionDep
from foldwise.service.users.auth import CurrentUser, current_user

__all__ = ["CurrentUser", "SessionDep", "SettingsDep", "current_user", "get_settings"]
