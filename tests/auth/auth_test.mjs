// Boris's OAuth resource-server mode (issue 30 §1–2) against a real identity provider:
// npm oauth2-mock-server, started here, issues the tokens (its token endpoint, its keys,
// its discovery document); Boris runs `--auth oauth` over HTTP and each token shape must
// get the right status and WWW-Authenticate challenge. Prints `ok …`/`not ok …` lines
// and, last, `N passed, N failed`. Run by tests/auth/run.sh (which installs it pinned).
//
// Env: BORIS_BIN (the boris binary), AUTH_KEEP=1 keeps Boris's log.
import { OAuth2Server, Events } from 'oauth2-mock-server';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BORIS = process.env.BORIS_BIN;
let passed = 0, failed = 0;
function check(name, cond, detail = '') {
  if (cond) { passed++; console.log(`ok ${name}`); }
  else { failed++; console.log(`not ok ${name}${detail ? ` - ${detail}` : ''}`); }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}

const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

// ---- the identity provider -----------------------------------------------------------
const idp = new OAuth2Server();
await idp.issuer.keys.generate('RS256', { kid: 'k1' });
await idp.start(await freePort(), '127.0.0.1');
const ISSUER = idp.issuer.url;
// Token shapes the test asks the provider for (a field of the token request): each is
// the provider's own token with one claim changed, signed with its key.
idp.service.on(Events.BeforeTokenSigning, (token, req) => {
  token.payload.sub = 'alice';
  switch (req.body.shape) {
    case 'bob': token.payload.sub = 'bob'; break;
    case 'no-aud': delete token.payload.aud; break;
    case 'expired-within-skew': token.payload.exp = now() - 10; break;
    case 'expired': token.payload.exp = now() - 600; token.payload.iat = now() - 4200; break;
    case 'not-yet': token.payload.nbf = now() + 600; break;
    case 'other-issuer': token.payload.iss = 'http://127.0.0.1:1/other'; break;
  }
});
let rotated = false;

// Token introspection (RFC 7662): the provider's /introspect answers from this table
// (token -> answer body; unknown tokens are inactive), counts its calls and checks that
// Boris authenticates as the client it was given.
// The built-in /introspect route does not parse the request body (9.3.0: only routes
// added with addRoute do), so the same handler is served at a route that does, and the
// discovery document names that one: Boris finds it there as it would any provider's.
const INTRO_ID = 'boris-rs', INTRO_SECRET = 'intro-s3cr3t-value';
idp.service.addRoute('POST', '/introspect-form', (req, res) => idp.service.introspectHandler(req, res));
idp.service.on(Events.BeforeWellKnownOpenIdConfiguration, (res) => {
  res.body.introspection_endpoint = `${ISSUER}/introspect-form`;
});
const introspection = { calls: 0, badClient: 0, answers: new Map(), failing: false };
idp.service.on(Events.BeforeIntrospect, (res, req) => {
  introspection.calls++;
  if (introspection.failing) { res.statusCode = 503; res.body = { error: 'temporarily_unavailable' }; return; }
  const expected = `Basic ${Buffer.from(`${INTRO_ID}:${INTRO_SECRET}`).toString('base64')}`;
  if (req.headers.authorization !== expected) {
    introspection.badClient++;
    res.statusCode = 401; res.body = { error: 'invalid_client' };
    return;
  }
  res.body = introspection.answers.get(req.body?.token) ?? { active: false };
});

// ---- Boris ---------------------------------------------------------------------------
const { openSync } = await import('node:fs');
const work = mkdtempSync(path.join(os.tmpdir(), 'boris-auth-'));
const children = [];
const cleanup = () => {
  for (const c of children) c.kill('SIGTERM');
  if (!process.env.AUTH_KEEP) rmSync(work, { recursive: true, force: true });
};
// A Boris on a free port with --auth oauth for the provider and `extra` flags.
async function startBoris(name, extra = [], env = {}) {
  const port = await freePort();
  const mcpUrl = `http://127.0.0.1:${port}/mcp`;
  const logPath = path.join(work, `${name}.log`);
  const child = spawn(BORIS, [
    '--transport', 'http', '--port', String(port), '--workdir', work,
    '--auth', 'oauth', '--oauth-issuer', ISSUER, '--public-url', mcpUrl,
    '--oauth-jwks-refetch-interval', '2', '--log-format', 'json', ...extra,
  ], { stdio: ['ignore', 'ignore', openSync(logPath, 'w')], env: { ...process.env, ...env } });
  children.push(child);
  for (let i = 0; ; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) break; } catch {}
    if (i > 100) { console.log(`not ok ${name} starts - ${readFileSync(logPath, 'utf8')}`); console.log('0 passed, 1 failed'); cleanup(); process.exit(1); }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { port, mcpUrl, logPath, pid: child.pid };
}
const { port, mcpUrl: MCP, logPath } = await startBoris('boris');

async function token(fields) {
  // A list (aud) as repeated fields, as form encoding carries one.
  const body = new URLSearchParams({ grant_type: 'client_credentials' });
  for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
  const r = await fetch(`${ISSUER}/token`, { method: 'POST', body });
  const j = await r.json();
  if (!j.access_token) throw new Error(`no token from the provider: ${JSON.stringify(j)}`);
  return j.access_token;
}
const ALL = 'boris:read boris:edit boris:exec';

async function mcp(tok, message, session, url = MCP) {
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
  if (tok) headers.authorization = `Bearer ${tok}`;
  if (session) headers['mcp-session-id'] = session;
  const r = await fetch(url, { method: 'POST', headers, body: JSON.stringify(message) });
  const text = await r.text();
  const data = text.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5)).pop();
  let json = null;
  try { json = JSON.parse(data ?? text); } catch {}
  return { status: r.status, www: r.headers.get('www-authenticate') ?? '', session: r.headers.get('mcp-session-id'), json };
}
const init = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'auth-test', version: '1' } } };
async function session(tok, url = MCP) {
  const r = await mcp(tok, init, undefined, url);
  if (r.status !== 200) return r;
  await mcp(tok, { jsonrpc: '2.0', method: 'notifications/initialized' }, r.session, url);
  return r;
}
const metadataUrl = `http://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;

try {
  // Discovery: both well-known URLs, no token needed, `resource` is the URL clients use.
  for (const url of [metadataUrl, `http://127.0.0.1:${port}/.well-known/oauth-protected-resource`]) {
    const r = await fetch(url);
    const m = r.ok ? await r.json() : {};
    check(`metadata at ${new URL(url).pathname}`, r.ok && m.resource === MCP
      && JSON.stringify(m.authorization_servers) === JSON.stringify([ISSUER])
      && m.scopes_supported?.includes('boris:exec') && m.bearer_methods_supported?.[0] === 'header', JSON.stringify(m));
  }

  // No token: 401 with the absolute metadata URL and the scope.
  let r = await mcp(null, init);
  check('no token: 401 with resource_metadata and scope', r.status === 401
    && r.www.startsWith('Bearer ') && r.www.includes(`resource_metadata="${metadataUrl}"`)
    && r.www.includes(`scope="${ALL}"`) && !r.www.includes('error='), `${r.status} ${r.www}`);

  // A good token from the provider's token endpoint: a session, the tools, a call.
  const good = await token({ aud: MCP, scope: ALL });
  r = await session(good);
  check('a token for this resource opens a session', r.status === 200 && r.json?.result?.serverInfo?.name === 'boris', `${r.status} ${JSON.stringify(r.json)}`);
  const sid = r.session;
  r = await mcp(good, { jsonrpc: '2.0', id: 2, method: 'tools/list' }, sid);
  const all = (r.json?.result?.tools ?? []).map((t) => t.name);
  check('all scopes: every tool listed', all.includes('bash') && all.includes('view') && all.includes('create_file'), all.join(','));
  r = await mcp(good, { jsonrpc: '2.0', id: 3, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo "$BORIS_TOKEN${AUTHORIZATION}hi"' } } }, sid);
  check('a tool call runs', r.status === 200 && JSON.stringify(r.json).includes('hi'), JSON.stringify(r.json)?.slice(0, 300));

  // Accepted: an audience list that names this resource; a token that expired less than
  // the clock skew (--oauth-clock-skew, 30 s by default) ago.
  r = await mcp(await token({ aud: ['https://other.example', MCP], scope: ALL }), init);
  check('an audience list naming this resource is accepted', r.status === 200, `${r.status} ${r.www}`);
  r = await mcp(await token({ aud: MCP, scope: ALL, shape: 'expired-within-skew' }), init);
  check('expired 10 s ago, within the default skew: accepted', r.status === 200, `${r.status} ${r.www}`);

  // Token shapes refused with 401 invalid_token.
  const refused = async (name, tok, why) => {
    const r = await mcp(tok, init);
    check(`${name}: 401 invalid_token`, r.status === 401 && r.www.includes('error="invalid_token"')
      && r.www.includes(`resource_metadata="${metadataUrl}"`) && (!why || r.www.includes(why)), `${r.status} ${r.www}`);
  };
  await refused('another audience', await token({ aud: 'http://127.0.0.1:9/mcp', scope: ALL }), 'not for this resource');
  await refused('an audience list without this resource', await token({ aud: ['https://a.example', 'https://b.example'], scope: ALL }), 'not for this resource');
  await refused('no audience', await token({ shape: 'no-aud', scope: ALL }), 'names no audience');
  await refused('expired', await token({ aud: MCP, scope: ALL, shape: 'expired' }), 'expired');
  await refused('not yet valid', await token({ aud: MCP, scope: ALL, shape: 'not-yet' }), 'not valid yet');
  await refused('another issuer', await token({ aud: MCP, scope: ALL, shape: 'other-issuer' }), 'not accepted');
  const [h, p] = good.split('.');
  await refused('alg none', `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.`);
  const jwk = idp.issuer.keys.toJSON()[0];
  const { createPublicKey } = await import('node:crypto');
  const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
  const hsInput = `${b64url({ alg: 'HS256', typ: 'JWT', kid: 'k1' })}.${p}`;
  await refused('HMAC signed with the public key', `${hsInput}.${createHmac('sha256', pem).update(hsInput).digest('base64url')}`, 'not accepted');
  await refused('a changed payload', `${h}.${b64url({ ...JSON.parse(Buffer.from(p, 'base64url')), scope: ALL + ' boris:metrics' })}.${good.split('.')[2]}`, 'signature');

  // Scopes: a read-only token lists only reading tools and gets 403 for bash.
  const reader = await token({ aud: MCP, scope: 'boris:read' });
  r = await session(reader);
  const rsid = r.session;
  r = await mcp(reader, { jsonrpc: '2.0', id: 4, method: 'tools/list' }, rsid);
  const listed = (r.json?.result?.tools ?? []).map((t) => t.name);
  check('boris:read lists reading tools only', listed.includes('view') && !listed.includes('bash') && !listed.includes('create_file'), listed.join(','));
  r = await mcp(reader, { jsonrpc: '2.0', id: 5, method: 'tools/call', params: { name: 'bash', arguments: { command: 'touch x' } } }, rsid);
  check('a call beyond the scopes: 403 insufficient_scope naming boris:exec', r.status === 403
    && r.www.includes('error="insufficient_scope"') && r.www.includes('scope="boris:exec boris:read"')
    && r.www.includes(`resource_metadata="${metadataUrl}"`), `${r.status} ${r.www}`);
  r = await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${good}` } });
  check('/metrics needs boris:metrics', r.status === 403 && (r.headers.get('www-authenticate') ?? '').includes('boris:metrics'), String(r.status));
  // Step-up: the same session with a token that has more scopes lists more tools.
  r = await mcp(good, { jsonrpc: '2.0', id: 6, method: 'tools/list' }, rsid);
  check('after step-up the session lists the new tools', (r.json?.result?.tools ?? []).some((t) => t.name === 'bash'), `${r.status}`);

  // A session is bound to its subject: bob's valid token cannot use alice's session.
  const bob = await token({ aud: MCP, scope: ALL, shape: 'bob' });
  r = await mcp(bob, { jsonrpc: '2.0', id: 7, method: 'tools/list' }, sid);
  check("another subject's token on a session: 404", r.status === 404, `${r.status}`);
  r = await mcp(good, { jsonrpc: '2.0', id: 8, method: 'tools/list' }, sid);
  check('the owner still uses it', r.status === 200 && (r.json?.result?.tools ?? []).length > 0, `${r.status}`);

  // Key rotation: a new key the cached set lacks. Within the refetch interval it is not
  // fetched (a flood of unknown key ids cannot hammer the provider); after it, it is.
  await idp.issuer.keys.generate('RS256', { kid: 'k2' });
  const store = idp.issuer.keys; const get = store.get.bind(store);
  store.get = (kid) => get(kid ?? 'k2'); rotated = true;
  const k2 = await token({ aud: MCP, scope: ALL });
  check('the rotated token is signed with k2', JSON.parse(Buffer.from(k2.split('.')[0], 'base64url')).kid === 'k2');
  await refused('unknown kid within the refetch interval', k2, 'no key');
  await new Promise((res) => setTimeout(res, 2200));
  r = await session(k2);
  check('unknown kid after the interval: keys fetched again, accepted', r.status === 200, `${r.status} ${r.www}`);

  // The log: the subject with each call, never a token.
  await new Promise((res) => setTimeout(res, 200));
  const log = readFileSync(logPath, 'utf8');
  check('the call log names the subject', /"subject":"alice"/.test(log) || /subject=\\?"?alice/.test(log), log.split('\n').filter((l) => l.includes('tool call')).join(' | ').slice(0, 300));
  const secret = [good, reader, k2].some((t) => log.includes(t.split('.')[2]));
  check('no token in the log', !secret);

  // ---- Opaque tokens through introspection (RFC 7662) --------------------------------
  // A second Boris introspects tokens that are not JWTs, at the endpoint the provider's
  // discovery document names; the client secret comes from the environment.
  const intro = await startBoris('boris-introspect', ['--oauth-client-id', INTRO_ID], { BORIS_OAUTH_CLIENT_SECRET: INTRO_SECRET });
  const IM = intro.mcpUrl;
  const imeta = `http://127.0.0.1:${intro.port}/.well-known/oauth-protected-resource/mcp`;
  const opaque = (name, answer) => {
    const tok = `opaque-${name}-${Math.random().toString(36).slice(2)}`;
    if (answer) introspection.answers.set(tok, { active: true, iss: ISSUER, aud: IM, exp: now() + 300, sub: 'carol', scope: ALL, ...answer });
    return tok;
  };
  const irefused = async (name, tok, why) => {
    const r = await mcp(tok, init, undefined, IM);
    check(`introspection: ${name}: 401 invalid_token`, r.status === 401 && r.www.includes('error="invalid_token"')
      && r.www.includes(`resource_metadata="${imeta}"`) && (!why || r.www.includes(why)), `${r.status} ${r.www}`);
  };
  const cmd = readFileSync(`/proc/${intro.pid}/cmdline`, 'utf8');
  check('introspection: the client secret is not on the command line', cmd.includes(INTRO_ID) && !cmd.includes(INTRO_SECRET));

  const carol = opaque('good', {});
  let calls = introspection.calls;
  r = await session(carol, IM);
  check('introspection: an active opaque token opens a session', r.status === 200 && r.json?.result?.serverInfo?.name === 'boris', `${r.status} ${r.www}`);
  const csid = r.session;
  r = await mcp(carol, { jsonrpc: '2.0', id: 20, method: 'tools/call', params: { name: 'bash', arguments: { command: 'echo "intro${BORIS_OAUTH_CLIENT_SECRET}-ok"' } } }, csid, IM);
  check('introspection: a tool call runs, the client secret not in its env', r.status === 200 && JSON.stringify(r.json).includes('intro-ok'), JSON.stringify(r.json)?.slice(0, 300));
  check('introspection: Boris authenticated as its client', introspection.badClient === 0 && introspection.calls > calls, `${introspection.badClient} bad of ${introspection.calls}`);
  check('introspection: the cache answers a token seen before (1 call for 3 requests)', introspection.calls - calls === 1, `${introspection.calls - calls} calls`);

  await irefused('inactive', opaque('inactive', { active: false }), 'not active');
  await irefused('an unknown token', opaque('unknown'), 'not active');
  await irefused('"active": "true" (a string)', opaque('string-active', { active: 'true' }), 'not active');
  await irefused('another audience', opaque('aud', { aud: 'https://other.example/mcp' }), 'not for this resource');
  await irefused('no audience', opaque('no-aud', { aud: undefined }), 'names no audience');
  await irefused('expired', opaque('expired', { exp: now() - 600 }), 'expired');
  await irefused('not yet valid', opaque('nbf', { nbf: now() + 600 }), 'not valid yet');
  await irefused('another issuer', opaque('iss', { iss: 'https://evil.example' }), 'not accepted');
  check('introspection: an answer without iss is accepted (the server asked is the issuer)', (await mcp(opaque('no-iss', { iss: undefined }), init, undefined, IM)).status === 200);

  // A refusal is cached briefly too: asking again does not reach the provider.
  const dead = opaque('dead', { active: false });
  await mcp(dead, init, undefined, IM);
  calls = introspection.calls;
  for (let i = 0; i < 3; i++) await mcp(dead, init, undefined, IM);
  check('introspection: a refused token asked again is answered from the cache', introspection.calls === calls, `${introspection.calls - calls} calls`);

  // Scopes as for JWTs: a read-only opaque token lists reading tools, 403 for bash.
  const dave = opaque('reader', { scope: 'boris:read', sub: 'dave' });
  r = await session(dave, IM);
  r = await mcp(dave, { jsonrpc: '2.0', id: 21, method: 'tools/call', params: { name: 'bash', arguments: { command: 'touch y' } } }, r.session, IM);
  check('introspection: a call beyond the scopes: 403 insufficient_scope', r.status === 403
    && r.www.includes('error="insufficient_scope"') && r.www.includes('scope="boris:exec boris:read"'), `${r.status} ${r.www}`);

  // The cache never outlives the token: an answer with exp 1 s ahead is asked again after it.
  const brief = opaque('brief', { exp: now() + 1 });
  await mcp(brief, init, undefined, IM);
  calls = introspection.calls;
  await new Promise((res) => setTimeout(res, 2100));
  r = await mcp(brief, init, undefined, IM);
  check('introspection: an answer is not reused past the token\'s exp', introspection.calls === calls + 1 && r.status === 200, `${introspection.calls - calls} calls, ${r.status}`);

  // A JWT still goes the JWT way (no introspection call) on the same server.
  calls = introspection.calls;
  r = await mcp(await token({ aud: IM, scope: ALL }), init, undefined, IM);
  check('introspection: a JWT is verified by signature, not introspected', r.status === 200 && introspection.calls === calls, `${r.status}, ${introspection.calls - calls} calls`);

  // A flood of random tokens: the provider is asked at most the burst (100) plus 20 a
  // second (DEC-98); the rest are refused without a call, and a user's cached token keeps
  // working throughout.
  calls = introspection.calls;
  const started = Date.now();
  const statuses = [];
  for (let batch = 0; batch < 40; batch++) {
    const rs = await Promise.all(Array.from({ length: 10 }, () => mcp(opaque('flood'), init, undefined, IM)));
    statuses.push(...rs.map((x) => x.status));
  }
  const elapsed = (Date.now() - started) / 1000;
  const floodCalls = introspection.calls - calls;
  r = await mcp(carol, { jsonrpc: '2.0', id: 23, method: 'tools/list' }, csid, IM);
  check('introspection: 400 random tokens: all 401, provider calls within burst + rate, a cached user unaffected',
    statuses.every((x) => x === 401) && floodCalls <= 100 + Math.ceil(20 * elapsed) + 1 && floodCalls >= 100 && r.status === 200,
    `${floodCalls} calls in ${elapsed.toFixed(2)} s, statuses ${[...new Set(statuses)]}, user ${r.status}`);
  console.log(`# flood: 400 random tokens in ${elapsed.toFixed(2)} s, ${floodCalls} introspection calls`);
  await new Promise((res) => setTimeout(res, 300)); // the bucket refills a few calls

  // The provider failing (503): a token seen before works from the cache; a new one
  // gets 401 (fail closed) and a log line that says why, without the token.
  introspection.failing = true;
  r = await mcp(carol, { jsonrpc: '2.0', id: 22, method: 'tools/list' }, csid, IM);
  check('introspection: provider failing, a cached active token still works', r.status === 200, `${r.status} ${r.www}`);
  const late = opaque('late', {});
  await irefused('provider failing (HTTP 503)', late, 'could not check');
  introspection.failing = false;
  // The provider unreachable (nothing listens at the endpoint): the same, and the log
  // line names the cause.
  const deadUrl = `http://127.0.0.1:${await freePort()}/introspect`;
  const unreachable = await startBoris('boris-unreachable', ['--oauth-client-id', INTRO_ID, '--oauth-introspection-url', deadUrl], { BORIS_OAUTH_CLIENT_SECRET: INTRO_SECRET });
  const orphan = `opaque-orphan-${Math.random().toString(36).slice(2)}`;
  r = await mcp(orphan, init, undefined, unreachable.mcpUrl);
  check('introspection: provider unreachable: 401 invalid_token', r.status === 401 && r.www.includes('could not check'), `${r.status} ${r.www}`);
  await new Promise((res) => setTimeout(res, 200));
  const logs = [logPath, intro.logPath, unreachable.logPath].map((p) => readFileSync(p, 'utf8'));
  const line = (log) => log.split('\n').find((l) => l.includes('cannot introspect an access token')) ?? '';
  check('introspection: provider failing is logged with the endpoint and the status', line(logs[1]).includes('/introspect-form: HTTP 503'), line(logs[1]).slice(0, 300) || logs[1].slice(-600));
  check('introspection: provider unreachable is logged with the endpoint and the cause', line(logs[2]).includes(deadUrl) && /connection refused/i.test(line(logs[2])), line(logs[2]).slice(0, 300) || logs[2].slice(-600));
  const leaked = [...introspection.answers.keys(), late, orphan, INTRO_SECRET].filter((t) => logs.some((log) => log.includes(t)));
  check('introspection: no token and no client secret in any log', leaked.length === 0, leaked.join(','));
} catch (e) {
  check('the run finishes', false, e?.stack ?? String(e));
} finally {
  cleanup();
  await idp.stop();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
