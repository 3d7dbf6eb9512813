"""The base of every settings section: unknown keys are errors, each field's docstring
is its documentation, and a loaded section does not change; and how a URL from the
settings is shown (``redact_url``)."""

import re
from typing import Optional

from pydantic import BaseModel, ConfigDict


class Section(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True, frozen=True)


_SECRET_QUERY = re.compile(r"(?i)([?&](?:password|passwd|pass|pwd|token|secret|api_?key|"
                           r"key)=)[^&#]*")


def redact_url(url: Optional[str]) -> Optional[str]:
    """A URL as logs, errors and ``/healthz`` show it: a user and password in it, and a
    password in its query (``?password=``, as redis-py reads a socket's), as ``***``
    ("redis://:s3cret@h:6379/0" -> "redis://***@h:6379/0")."""
    if not url:
        return url
    scheme, sep, rest = url.partition("://")
    if not sep:  # no URL as written: whatever stands before an "@" may be a password
        return _SECRET_QUERY.sub(r"\1***", "***@" + url.rsplit("@", 1)[1] if "@" in url
                                 else url)
    host, slash, path = rest.partition("/")
    if "@" in host:
        rest = f"***@{host.rsplit('@', 1)[1]}{slash}{path}"
    return _SECRET_QUERY.sub(r"\1***", scheme + sep + rest)
