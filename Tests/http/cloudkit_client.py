"""What the HTTP tests of `ckfs serve` share: where the server is, its credentials, and
requests-cloudkit (PyPI) made to run on Python 3.

The server under test, and who may call it, come from the environment that
WebServicesTests (Swift) sets: CKFS_URL, CKFS_CONTAINER, CKFS_API_TOKEN, CKFS_WEB_TOKEN (user
alice), CKFS_WEB_TOKEN_BOB, CKFS_KEY_ID and CKFS_KEY_PEM (a server-to-server key), CKFS_STORE
and CKFS_BIN.
"""
import hashlib
import base64
import io
import os
import subprocess
import tempfile

import requests
import requests_cloudkit
import requests_cloudkit.cloudkit

URL = os.environ["CKFS_URL"]
CONTAINER = os.environ["CKFS_CONTAINER"]
API_TOKEN = os.environ["CKFS_API_TOKEN"]
WEB_TOKEN = os.environ["CKFS_WEB_TOKEN"]
WEB_TOKEN_BOB = os.environ.get("CKFS_WEB_TOKEN_BOB", "")
KEY_ID = os.environ.get("CKFS_KEY_ID", "")
KEY_PEM = os.environ.get("CKFS_KEY_PEM", "")
STORE = os.environ["CKFS_STORE"]
CKFS = os.environ["CKFS_BIN"]


def base(env="development"):
    return f"{URL}/database/1/{CONTAINER}/{env}"


def call(method, db, subpath, body=None, web=WEB_TOKEN, api=API_TOKEN, env="development", raw=None):
    """One request as a web client makes it: tokens in the query (requests percent-encodes
    them), the body as JSON. Returns (status, parsed JSON body)."""
    params = {}
    if api is not None:
        params["ckAPIToken"] = api
    if web is not None:
        params["ckWebAuthToken"] = web
    url = f"{base(env)}/{db}/{subpath}" if db else f"{base(env)}/{subpath}"
    if raw is not None:
        r = requests.request(method, url, params=params, data=raw, timeout=30)
    elif body is None:
        r = requests.request(method, url, params=params, timeout=30)
    else:
        r = requests.request(method, url, params=params, json=body, timeout=30)
    try:
        return r.status_code, r.json()
    except ValueError:
        raise AssertionError(f"{method} {subpath}: status {r.status_code}, not JSON: {r.text[:300]!r}")


def post(db, subpath, body, **kw):
    return call("POST", db, subpath, body, **kw)


def ok(status_body, what=""):
    status, body = status_body
    assert status == 200, f"{what}: expected 200, got {status}: {body}"
    return body


def fail(status_body, status, code, what=""):
    got_status, body = status_body
    assert got_status == status and body.get("serverErrorCode") == code, \
        f"{what}: expected {status} {code}, got {got_status}: {body}"
    assert body.get("reason") and body.get("uuid"), f"{what}: an error needs reason and uuid: {body}"
    return body


def ckfs(*args, user="alice", input=None):
    """Runs the ckfs CLI on the same store; returns its standard output."""
    cmd = [CKFS, *args, "--store", STORE] + (["--user", user] if user else [])
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=60, input=input)
    assert out.returncode == 0, f"ckfs {' '.join(args)}: {out.stderr}"
    return out.stdout


# requests-cloudkit 1.0.1 on Python 3: its signing recipe (headers, date format, the message
# `date:bodyHash:path`, ECDSA over SHA-256, DER, Base64) runs as written, but it hashes `str`
# and writes `str` to a binary temporary file, both TypeErrors on Python 3. The tests mend
# those two steps here, in the client, and leave the server to Apple's rules.
class _TextTolerantTempFile:
    """A NamedTemporaryFile that takes the str the library writes, as Python 2 did."""

    def __init__(self, *args, **kwargs):
        self._file = tempfile.NamedTemporaryFile(*args, **kwargs)

    def write(self, data):
        return self._file.write(data.encode() if isinstance(data, str) else data)

    def __getattr__(self, name):
        return getattr(self._file, name)

    def __enter__(self):
        self._file.__enter__()
        return self

    def __exit__(self, *exc):
        return self._file.__exit__(*exc)


class _TempfileModule:
    NamedTemporaryFile = _TextTolerantTempFile


requests_cloudkit.cloudkit.tempfile = _TempfileModule


class SignedAuth(requests_cloudkit.CloudKitAuth):
    """requests-cloudkit's CloudKitAuth with the body hash computed over the body's bytes."""

    def encode_body(self, body):
        if body is None:
            body = b""
        elif isinstance(body, str):
            body = body.encode()
        return base64.b64encode(hashlib.sha256(body).digest()).decode()


def signed(method, subpath, body=None, key_id=None, pem=None, env="development", db="public", headers=None):
    """A server-to-server request signed by requests-cloudkit. Returns (status, JSON)."""
    url = f"{base(env)}/{db}/{subpath}"
    data = None if body is None else (body if isinstance(body, (bytes, str)) else __import__("json").dumps(body))
    r = requests.request(method, url, data=data, auth=SignedAuth(key_id or KEY_ID, pem or KEY_PEM), timeout=30,
                         headers=headers)
    return r.status_code, r.json()
