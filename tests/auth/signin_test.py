"""A real sign-in, end to end (issue 30 §2): the Python `mcp` SDK's OAuth client against Boris
(`--auth oauth`) and npm oidc-provider (signin_provider.mjs), both started here.

The client gets a 401 from Boris, reads the protected-resource metadata the challenge points
to, discovers the provider, registers itself (RFC 7591), sends the user to the authorization
endpoint — a scripted user agent posts the provider's development login and consent pages
over HTTP (there is no browser) — exchanges the code (PKCE, `resource` = Boris's URL) for a
JWT access token bound to Boris, and calls Boris's tools (a view and a bash call) on both
eras the SDK speaks. A second Boris (another resource, the same provider) must refuse the
first one's token, and the client then signs in again for it.

usage: signin_test.py  (env BORIS_BIN, NODE, PROVIDER = path of signin_provider.mjs beside
its node_modules; AUTH_KEEP=1 keeps the work dir with the logs)
Prints `ok …`/`not ok …` lines and, last, `N passed, N failed`; exits 1 on any failure.
"""

import asyncio
import base64
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import traceback
from html.parser import HTMLParser
from urllib.parse import parse_qs, urljoin, urlparse

import httpx2
from mcp import Client
from mcp.client.auth import AuthorizationCodeResult, OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata, OAuthToken

USER = "alice@example.test"  # the development login page takes any login and password
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the user agent stops at it
CALL_TIMEOUT = 20.0

passed = failed = 0


def check(name, ok, why=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"ok signin: {name}", flush=True)
    else:
        failed += 1
        print(f"not ok signin: {name} - {str(why)[:400]}", flush=True)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def claims(jwt):
    """The payload and header of a JWT, unverified (Boris verifies; the test reads)."""
    header, payload = (json.loads(base64.urlsafe_b64decode(p + "=" * (-len(p) % 4))) for p in jwt.split(".")[:2])
    return header, payload


# ---- processes ---------------------------------------------------------------------------
class Provider:
    """signin_provider.mjs on a free port; its stdout lines counted as they arrive."""

    def __init__(self, work, resources):
        self.port = free_port()
        env = {**os.environ, "SIGNIN_PORT": str(self.port), "SIGNIN_RESOURCES": " ".join(resources)}
        self.log = open(os.path.join(work, "provider.log"), "w")
        self.proc = subprocess.Popen([os.environ["NODE"], os.environ["PROVIDER"]], env=env,
                                     stdout=subprocess.PIPE, stderr=self.log, text=True)
        self.issuer = None
        self.jwks_fetches = 0
        self.ready = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        if not self.ready.wait(30):
            raise RuntimeError("oidc-provider did not start: " + open(self.log.name).read()[-2000:])

    def _read(self):
        for line in self.proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "issuer" in msg:
                self.issuer = msg["issuer"]
                self.ready.set()
            if "jwks" in msg:
                self.jwks_fetches = msg["jwks"]


class Boris:
    def __init__(self, work, name, issuer, port):
        self.url = f"http://127.0.0.1:{port}/mcp"
        self.log_path = os.path.join(work, f"{name}.log")
        self.workdir = os.path.join(work, name)
        os.makedirs(self.workdir)
        with open(os.path.join(self.workdir, "hello.txt"), "w") as f:
            f.write(f"hello from {name}\n")
        self.proc = subprocess.Popen(
            [os.environ["BORIS_BIN"], "--transport", "http", "--port", str(port), "--workdir", self.workdir,
             "--auth", "oauth", "--oauth-issuer", issuer, "--public-url", self.url, "--log-format", "json"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(self.log_path, "w"))
        for _ in range(100):
            try:
                if httpx2.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    return
            except httpx2.HTTPError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"{name} did not start: " + open(self.log_path).read()[-2000:])

    def log(self):
        with open(self.log_path) as f:
            return f.read()


# ---- the scripted user agent ---------------------------------------------------------------
class Forms(HTMLParser):
    """The forms of a page: action, method and inputs (name -> value)."""

    def __init__(self):
        super().__init__()
        self.forms = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "form":
            self.forms.append({"action": a.get("action", ""), "method": (a.get("method") or "get").lower(), "inputs": {}})
        elif tag == "input" and self.forms and a.get("name"):
            self.forms[-1]["inputs"][a["name"]] = a.get("value") or ""


class UserAgent:
    """Follows the authorization URL as a browser would: redirects, and each page's form
    submitted with the user's login (any password: the development pages take any). Records
    the pages it posted; stops at the redirect to the client's redirect URI."""

    def __init__(self):
        self.posted = []
        self.result = None

    async def sign_in(self, authorization_url):
        async with httpx2.AsyncClient(follow_redirects=False, timeout=10) as ua:  # keeps cookies
            method, url, data = "GET", authorization_url, None
            for _ in range(16):
                r = await ua.request(method, url, data=data)
                if r.is_redirect:
                    location = urljoin(str(r.url), r.headers["location"])
                    if location.startswith(REDIRECT_URI):
                        q = {k: v[0] for k, v in parse_qs(urlparse(location).query).items()}
                        if "error" in q:
                            raise RuntimeError(f"the provider refused: {q}")
                        self.result = AuthorizationCodeResult(code=q["code"], state=q.get("state"), iss=q.get("iss"))
                        return
                    method, url, data = "GET", location, None
                    continue
                parser = Forms()
                parser.feed(r.text)
                if r.status_code != 200 or not parser.forms:
                    raise RuntimeError(f"unexpected page {r.status_code} at {url}: {r.text[:500]}")
                form = parser.forms[0]
                data = dict(form["inputs"])
                if "login" in data:
                    data.update(login=USER, password="any password")
                self.posted.append(data.get("prompt", "?"))
                method, url = form["method"].upper(), urljoin(str(r.url), form["action"])
            raise RuntimeError("no redirect to the client after 16 pages")

    async def callback(self):
        return self.result


class Storage:
    def __init__(self, tokens=None, client_info=None):
        self.tokens, self.client_info = tokens, client_info

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client_info

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client_info = client_info


async def connect_and_use(boris, storage, mode):
    """One client session against `boris`: signs in when needed, lists tools, calls view and bash.
    Returns (exchanges, user agent, result or exception)."""
    ua = UserAgent()
    auth = OAuthClientProvider(
        server_url=boris.url,
        client_metadata=OAuthClientMetadata(client_name="boris signin test", redirect_uris=[REDIRECT_URI],
                                            grant_types=["authorization_code", "refresh_token"],
                                            response_types=["code"], token_endpoint_auth_method="none"),
        storage=storage, redirect_handler=ua.sign_in, callback_handler=ua.callback)
    exchanges = []

    async def record(response):
        exchanges.append((response.request.method, str(response.request.url), response.status_code,
                          response.headers.get("www-authenticate", "")))

    http = httpx2.AsyncClient(auth=auth, timeout=30, event_hooks={"response": [record]})
    try:
        async with http, Client(streamable_http_client(boris.url, http_client=http), mode=mode) as client:
            tools = {t.name for t in (await asyncio.wait_for(client.list_tools(), CALL_TIMEOUT)).tools}
            view = await client.call_tool("view", {"path": "hello.txt"}, read_timeout_seconds=CALL_TIMEOUT)
            bash = await client.call_tool("bash", {"command": "echo ran-as-$USER-in-$(basename $PWD)"},
                                          read_timeout_seconds=CALL_TIMEOUT)
            text = lambda r: "".join(getattr(c, "text", "") for c in r.content)  # noqa: E731
            return exchanges, ua, {"version": client.protocol_version, "tools": tools,
                                   "view": (view.is_error, text(view)), "bash": (bash.is_error, text(bash))}
    except BaseException as e:  # noqa: BLE001 - reported as a failed check
        return exchanges, ua, e


def failed_run(result, exchanges):
    if isinstance(result, BaseException):
        while isinstance(result, BaseExceptionGroup) and len(result.exceptions) == 1:
            result = result.exceptions[0]
        return f"{type(result).__name__}: {result}; exchanges: {[(m, u, s) for m, u, s, _ in exchanges]}"
    return None


async def main():
    work = tempfile.mkdtemp(prefix="boris-signin-")
    provider = boris_a = boris_b = None
    try:
        port_a, port_b = free_port(), free_port()
        url_a, url_b = f"http://127.0.0.1:{port_a}/mcp", f"http://127.0.0.1:{port_b}/mcp"
        provider = Provider(work, [url_a, url_b])
        boris_a = Boris(work, "boris-a", provider.issuer, port_a)
        boris_b = Boris(work, "boris-b", provider.issuer, port_b)

        # Run 1: a fresh client, the handshake era (mode="legacy"), against Boris A.
        storage = Storage()
        ex, ua, res = await connect_and_use(boris_a, storage, "legacy")
        why = failed_run(res, ex)
        first = ex[0] if ex else ("", "", 0, "")
        meta_a = f"http://127.0.0.1:{port_a}/.well-known/oauth-protected-resource/mcp"
        check("the first request gets 401 with the metadata URL", first[2] == 401 and f'resource_metadata="{meta_a}"' in first[3],
              first)
        urls = [u for _, u, _, _ in ex]
        check("the client read Boris's metadata, then the provider's",
              meta_a in urls and any(u.startswith(provider.issuer + "/.well-known/") for u in urls), urls)
        reg = [s for m, u, s, _ in ex if m == "POST" and u == provider.issuer + "/reg"]
        check("the client registered itself (RFC 7591: 201)", reg == [201], reg)
        check("the user signed in and consented on the provider's pages", ua.posted == ["login", "consent"], ua.posted)
        tok = storage.tokens.access_token if storage.tokens else ""
        header, payload = claims(tok) if tok.count(".") == 2 else ({}, {})
        check("the access token is a JWT for Boris A (aud = its --public-url)",
              header.get("typ") == "at+jwt" and payload.get("aud") == url_a and payload.get("iss") == provider.issuer
              and payload.get("sub") == USER and set(payload.get("scope", "").split()) >= {"boris:read", "boris:exec"},
              (header, payload) if tok else why)
        ok = why is None
        check("tools listed after sign-in (era 2025-11-25)", ok and res["version"] == "2025-11-25"
              and {"view", "bash"} <= res["tools"], why or res)
        check("view reads a file", ok and not res["view"][0] and "hello from boris-a" in res["view"][1],
              why or res)
        check("bash runs", ok and not res["bash"][0] and "-in-boris-a" in res["bash"][1], why or res)
        jwks_after_first = provider.jwks_fetches
        check("Boris fetched the provider's keys once", jwks_after_first == 1, jwks_after_first)

        # The same client again on the modern era (mode="auto" discovers it): the stored token
        # is used as it is, no second sign-in.
        ex, ua2, res = await connect_and_use(boris_a, storage, "auto")
        why = failed_run(res, ex)
        check("the stored token works on the 2026-07-28 era (discovered), no new sign-in",
              why is None and res["version"] == "2026-07-28" and "hello from boris-a" in res["view"][1]
              and not ua2.posted and all(s != 401 for _, _, s, _ in ex), why or (res, ua2.posted))
        log = boris_a.log()
        check("Boris A's log names the subject with each call, never the token",
              f'"subject":"{USER}"' in log and tok.split(".")[2] not in log, log[-600:])

        # Run 2: Boris B (another resource of the same provider) gets the token for A.
        r = httpx2.post(url_b, headers={"authorization": f"Bearer {tok}", "accept": "application/json, text/event-stream",
                                        "content-type": "application/json"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "initialize",
                              "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                         "clientInfo": {"name": "raw", "version": "1"}}})
        www = r.headers.get("www-authenticate", "")
        check("Boris B refuses the token for Boris A: 401 invalid_token",
              r.status_code == 401 and 'error="invalid_token"' in www and "not for this resource" in www, (r.status_code, www))
        storage_b = Storage(tokens=storage.tokens, client_info=storage.client_info)
        ex, ua3, res = await connect_and_use(boris_b, storage_b, "legacy")
        why = failed_run(res, ex)
        first = ex[0] if ex else ("", "", 0, "")
        check("the client's stored token for A is refused by B (401 invalid_token)",
              first[2] == 401 and 'error="invalid_token"' in first[3], first)
        tok_b = storage_b.tokens.access_token if storage_b.tokens else ""
        aud_b = claims(tok_b)[1].get("aud") if tok_b.count(".") == 2 else None
        check("the client signs in again and gets a token for B", ua3.posted and aud_b == url_b, (ua3.posted, aud_b, why))
        check("Boris B's tools work with its own token", why is None and "hello from boris-b" in res["view"][1]
              and "-in-boris-b" in res["bash"][1], why or res)
        r = httpx2.post(url_a, headers={"authorization": f"Bearer {tok_b}", "accept": "application/json, text/event-stream",
                                        "content-type": "application/json"},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        check("and Boris A refuses B's token", r.status_code == 401 and "not for this resource" in r.headers.get("www-authenticate", ""),
              r.status_code)
    except BaseException:  # noqa: BLE001 - any escape is a failed run
        check("the run finishes", False, traceback.format_exc())
    finally:
        for p in (boris_a, boris_b, provider):
            if p is not None:
                p.proc.terminate()
                p.proc.wait(10)
        if os.environ.get("AUTH_KEEP"):
            print(f"# kept {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    if os.environ.get("SIGNIN_DEBUG"):
        logging.basicConfig(level=logging.DEBUG)
    sys.exit(asyncio.run(main()))
