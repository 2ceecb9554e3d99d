"""A remote agent's header values (API keys, bearer tokens), encrypted at rest.

Fernet (``cryptography``) with a key derived from SECRET_KEY by HKDF-SHA256 (its own ``info``,
so the key is this use's alone); values sealed under a key of ``SECRET_KEY_FALLBACKS`` still
open, so SECRET_KEY can be rotated the way Django rotates it (re-save the agent's headers to
seal them under the new key). A value is never logged, shown, exported or returned by an API:
only the names are (``RemoteAgent.header_names``).
"""

import base64
import json

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings

INFO = b"a2ui remote agent headers v1"


class SealError(Exception):
    """The sealed headers cannot be opened (SECRET_KEY changed with no fallback)."""


def _key(secret):
    raw = secret.encode("utf-8", "surrogatepass") if isinstance(secret, str) else bytes(secret)
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=INFO).derive(raw)
    return Fernet(base64.urlsafe_b64encode(derived))


def _fernet():
    secrets = [settings.SECRET_KEY, *getattr(settings, "SECRET_KEY_FALLBACKS", ())]
    return MultiFernet([_key(s) for s in secrets])


def seal(headers):
    """The sealed text of ``headers`` (name -> value), "" for none."""
    if not headers:
        return ""
    text = json.dumps(headers, ensure_ascii=False, separators=(",", ":"))
    return _fernet().encrypt(text.encode("utf-8")).decode("ascii")


def unseal(sealed):
    """The headers sealed in ``sealed`` (name -> value); SealError when they cannot be opened."""
    if not sealed:
        return {}
    try:
        return json.loads(_fernet().decrypt(sealed.encode("ascii")))
    except (InvalidToken, ValueError) as exc:
        raise SealError("The agent's headers cannot be decrypted (SECRET_KEY changed?): "
                        "set them again.") from exc
