"""Domain errors raised by service functions and mapped to HTTP answers in one place."""

from __future__ import annotations


class ServiceError(Exception):
    """Base of the errors a client caused; ``status_code`` is the HTTP answer."""

    status_code = 400
    #: Extra HTTP headers of the answer (e.g. ``Retry-After``).
    headers: dict[str, str] = {}  # noqa: RUF012 - read-only default, replaced per instance

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFoundError(ServiceError):
    """The id does not exist *for this user* (other users' ids look the same)."""

    status_code = 404


class ConflictError(ServiceError):
    """The request clashes with stored state (name taken, cycle, folder not empty)."""

    status_code = 409


class InvalidInputError(ServiceError):
    """The input is well-formed but unusable (empty, corrupt, bad name)."""

    status_code = 422


class TooLargeError(ServiceError):
    """Over a size limit."""

    status_code = 413


class UnsupportedTypeError(ServiceError):
    """A file type Foldwise does not read."""

    status_code = 415


class UnauthorizedError(ServiceError):
    """Missing, wrong or revoked credentials."""

    status_code = 401


class ForbiddenError(ServiceError):
    """Authenticated, but the request is not allowed (e.g. missing CSRF token)."""

    status_code = 403


class RateLimitedError(ServiceError):
    """Too many requests of one kind (rate_limits.py); says when to retry."""

    status_code = 429

    def __init__(self, message: str, retry_after_seconds: int) -> None:
        super().__init__(message)
        self.retry_after_seconds = retry_after_seconds
        self.headers = {"Retry-After": str(retry_after_seconds)}
