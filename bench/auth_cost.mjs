// What validating an OAuth access token costs per tool call (issue 30 §5): one Boris with
// `--auth oauth` (a JWT from npm oauth2-mock-server, the key set cached after the first
// request) and one with a static `--token`, measured in turns in one run by
// `boris-spec bench --transport http` (a 4 KB view, session era, one client); then the
// JWKS fetches under key rotation, counted at the provider.
//
//   bash bench/auth_cost.sh            # installs the provider (tests/auth/run.sh's cache)
//
// Env: BORIS, BORIS_SPEC (the binaries), ROUNDS (3), CALLS (2000 per round and server),
// REFETCH (the --oauth-jwks-refetch-interval, 2 s). Prints Markdown on stdout.
import { OAuth2Server, Events } from 'oauth2-mock-server';
import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

const BORIS = process.env.BORIS, SPEC = process.env.BORIS_SPEC;
const ROUNDS = Number(process.env.ROUNDS ?? 3), CALLS = Number(process.env.CALLS ?? 2000);
const REFETCH = Number(process.env.REFETCH ?? 2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const freePort = () => new Promise((resolve) => {
  const s = net.createServer();
  s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});

// ---- the provider, its key-set fetches counted -----------------------------------------
const idp = new OAuth2Server();
await idp.issuer.keys.generate('RS256', { kid: 'k1' });
await idp.start(await freePort(), '127.0.0.1');
const ISSUER = idp.issuer.url;
let jwksFetches = 0;
// The built-in /jwks handler cannot be wrapped; a route of ours serves the same set and
// the discovery document names it, so Boris finds it as it would any provider's.
idp.service.addRoute('GET', '/jwks-counted', (req, res) => { jwksFetches++; idp.service.jwksHandler(req, res); });
idp.service.on(Events.BeforeWellKnownOpenIdConfiguration, (res) => { res.body.jwks_uri = `${ISSUER}/jwks-counted`; });
idp.service.on(Events.BeforeTokenSigning, (token) => { token.payload.sub = 'bench'; });
async function token(aud) {
  const body = new URLSearchParams({ grant_type: 'client_credentials', aud, scope: 'boris:read boris:edit boris:exec' });
  const j = await (await fetch(`${ISSUER}/token`, { method: 'POST', body })).json();
  return j.access_token;
}

// ---- the two servers ---------------------------------------------------------------------
const work = mkdtempSync(path.join(os.tmpdir(), 'boris-auth-cost-'));
writeFileSync(path.join(work, 'four.txt'), 'x'.repeat(4095) + '\n');
const children = [];
async function boris(args) {
  const port = await freePort();
  const child = spawn(BORIS, ['--transport', 'http', '--port', String(port), '--workdir', work, '--sandbox', 'off', ...args(port)],
    { stdio: ['ignore', 'ignore', process.env.AUTH_COST_LOG ? 'inherit' : 'ignore'] });
  children.push(child);
  for (let i = 0; i < 100; i++) {
    try { if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return port; } catch {}
    await sleep(100);
  }
  throw new Error(`boris ${args(port).join(' ')} did not start`);
}
const STATIC = 'static-bench-token-0123456789abcdef';
const oauthPort = await boris((p) => ['--auth', 'oauth', '--oauth-issuer', ISSUER,
  '--public-url', `http://127.0.0.1:${p}/mcp`, '--oauth-jwks-refetch-interval', String(REFETCH)]);
const tokenPort = await boris(() => ['--auth', 'token', '--token', STATIC]);
const jwt = await token(`http://127.0.0.1:${oauthPort}/mcp`);

// Asynchronous: the provider runs in this process and must answer Boris meanwhile.
async function bench(port, bearer) {
  const run = () => promisify(execFile)(SPEC, ['bench', '--transport', 'http', '--url', `127.0.0.1:${port}`,
    '--call', 'view', '{"path":"four.txt"}', '-n', String(CALLS), '-c', '1', '--warmup', '100',
    '--bearer-env', 'BENCH_BEARER', '--json'], { env: { ...process.env, BENCH_BEARER: bearer } });
  let out;
  try { ({ stdout: out } = await run()); } catch (e) { throw new Error(`boris-spec bench: ${e.stderr}`); }
  const r = JSON.parse(out);
  if (r.failed_calls) throw new Error(`failed calls: ${r.first_failure}`);
  return r.latency_ms;
}

const mcp = `http://127.0.0.1:${oauthPort}/mcp`;
const init = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bench', version: '1' } } });
const call = async (tok) => (await fetch(mcp, { method: 'POST', body: init, headers: { authorization: `Bearer ${tok}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } })).status;

try {
  const rows = [];
  // The first JWT fetches the key set; the measured calls then find it cached.
  if (await call(jwt) !== 200) throw new Error('the JWT is refused');
  const before = jwksFetches;
  for (let round = 1; round <= ROUNDS; round++) {
    // In turns, the order swapped each round, so drift on the machine hits both alike.
    const order = round % 2 ? ['jwt', 'static'] : ['static', 'jwt'];
    const got = {};
    for (const which of order) got[which] = which === 'jwt' ? await bench(oauthPort, jwt) : await bench(tokenPort, STATIC);
    rows.push(got);
  }
  const during = jwksFetches - before;
  const median = (xs) => xs.slice().sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`| round | JWT p50 / p99 (ms) | static token p50 / p99 (ms) | JWT − static at p50 (ms) |`);
  console.log('| ---: | ---: | ---: | ---: |');
  rows.forEach((r, i) => console.log(`| ${i + 1} | ${r.jwt.p50.toFixed(3)} / ${r.jwt.p99.toFixed(3)} | ${r.static.p50.toFixed(3)} / ${r.static.p99.toFixed(3)} | ${(r.jwt.p50 - r.static.p50).toFixed(3)} |`));
  const d50 = median(rows.map((r) => r.jwt.p50 - r.static.p50));
  const d99 = median(rows.map((r) => r.jwt.p99 - r.static.p99));
  console.log(`\nMedian over ${ROUNDS} rounds of ${CALLS} calls each: JWT − static ${d50.toFixed(3)} ms at p50, ${d99.toFixed(3)} ms at p99. Key-set fetches during the ${ROUNDS * (CALLS + 100)} JWT calls (warm-up included): ${during} (the one fetch before them: ${before}).`);

  // ---- key rotation ------------------------------------------------------------------
  const lines = [];
  await sleep(REFETCH * 1000 + 200); // past the refetch interval since the first fetch
  await idp.issuer.keys.generate('RS256', { kid: 'k2' });
  const store = idp.issuer.keys; const get = store.get.bind(store);
  store.get = (kid) => get(kid ?? 'k2');
  const k2 = await token(mcp);
  let f0 = jwksFetches;
  lines.push(`| a token signed with a new key (k2), ${REFETCH} s after the last fetch | ${await call(k2)} | ${jwksFetches - f0} |`);
  f0 = jwksFetches;
  const statuses = await Promise.all(Array.from({ length: 10 }, () => call(k2)));
  lines.push(`| the same token 10 more times (k2 now cached) | ${[...new Set(statuses)].join(',')} | ${jwksFetches - f0} |`);
  // Unknown key ids (forged: k2's payload and signature under another kid), 200 of them.
  const [, p, s] = k2.split('.');
  const forged = (i) => `${Buffer.from(JSON.stringify({ alg: 'RS256', typ: 'JWT', kid: `unknown-${i}` })).toString('base64url')}.${p}.${s}`;
  f0 = jwksFetches;
  const t0 = Date.now();
  const flood = [];
  for (let i = 0; i < 20; i++) flood.push(...await Promise.all(Array.from({ length: 10 }, (_, j) => call(forged(i * 10 + j)))));
  const secs = ((Date.now() - t0) / 1000).toFixed(2);
  lines.push(`| 200 tokens with unknown key ids in ${secs} s | ${[...new Set(flood)].join(',')} | ${jwksFetches - f0} |`);
  await sleep(REFETCH * 1000 + 200);
  f0 = jwksFetches;
  const again = await Promise.all(Array.from({ length: 50 }, (_, i) => call(forged(1000 + i))));
  lines.push(`| 50 more, after the refetch interval | ${[...new Set(again)].join(',')} | ${jwksFetches - f0} |`);
  console.log(`\n| key rotation (--oauth-jwks-refetch-interval ${REFETCH}) | status | key-set fetches |`);
  console.log('| --- | ---: | ---: |');
  for (const l of lines) console.log(l);
} finally {
  for (const c of children) c.kill('SIGTERM');
  await idp.stop();
  rmSync(work, { recursive: true, force: true });
}
