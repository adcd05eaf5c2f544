"""Runs a docs block that uses requests and requests-cloudkit (scripts/doc-harness/web-client
starts the server and sets the environment): with the mend of requests-cloudkit 1.0.1 on
Python 3 that docs/WebServices.md points to (Tests/http/cloudkit_client.py), and every
answer the block's requests get checked to be 200."""
import os
import sys

import requests
import requests_cloudkit

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "Tests", "http"))
import cloudkit_client  # noqa: E402  (mends the library's temporary file on import)

requests_cloudkit.CloudKitAuth.encode_body = cloudkit_client.SignedAuth.encode_body
answers = []
_post = requests.post


def post(*args, **kwargs):
    r = _post(*args, **kwargs)
    answers.append(r)
    return r


requests.post = post
path = sys.argv[1]
names = {"KEY_ID": os.environ["CKFS_KEY_ID"], "API_TOKEN": os.environ["CKFS_API_TOKEN"], "WEB_TOKEN": os.environ["CKFS_WEB_TOKEN"]}
exec(compile(open(path, encoding="utf-8").read(), path, "exec"), names)
failed = [(r.status_code, r.text[:300]) for r in answers if r.status_code != 200]
if not answers or failed:
    sys.exit(f"{path}: {len(answers)} requests, not answered 200: {failed}")
print(f"{len(answers)} requests answered 200")
