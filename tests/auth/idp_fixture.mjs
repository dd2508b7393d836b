// The identity provider the spec suite's auth pack starts (issue 30 §3): npm
// oauth2-mock-server, a real OAuth 2.0 / OpenID provider (discovery, JWKS, token
// endpoint), with the few hooks a test of a resource server needs. boris-spec starts it
// for each case that `requires: [identity-provider]` (the command in
// `--identity-provider` / BORIS_SPEC_IDP) and stops it when the case ends.
//
// The protocol, which another provider wrapper may implement as well:
//   - ready: one line on stdout, `{"issuer":"http://127.0.0.1:PORT"}`; then it runs until
//     stdin closes or it gets SIGTERM;
//   - a token: POST {issuer}/token, form-encoded, `grant_type=client_credentials`,
//     `scope`, `aud` (repeated for a list) and `fixture` (JSON, optional):
//       claims   {name: value|null}  set (null: delete) payload claims after the provider's
//       exp_in   seconds             exp = now + exp_in (negative: expired)
//       nbf_in   seconds             nbf = now + nbf_in
//       forge    alg-none | hmac-public-key | changed-payload
//                                    what an attacker makes of the signed token: no
//                                    signature; HS256 keyed with the provider's public key
//                                    (PEM); the payload changed under the old signature
//     the answer is the provider's token response (`access_token`);
//   - a key rotation: POST {issuer}/fixture/rotate makes a new RS256 key (a new `kid`) the
//     one tokens are signed with; the JWKS lists both. Answers `{"kid": "..."}`.
//
// Run from a directory whose node_modules has oauth2-mock-server (tests/auth/install.sh
// copies it beside the pinned install); Node >= 22.
import { OAuth2Server, Events } from 'oauth2-mock-server';
import { createHmac, createPublicKey } from 'node:crypto';

const b64url = (obj) => Buffer.from(JSON.stringify(obj)).toString('base64url');
const now = () => Math.floor(Date.now() / 1000);

const idp = new OAuth2Server();
await idp.issuer.keys.generate('RS256', { kid: 'k1' });
let signingKid = 'k1';
const store = idp.issuer.keys;
const get = store.get.bind(store);
// Tokens are signed with the newest key once a rotation made one.
store.get = (kid) => get(kid ?? signingKid);

// The fixture's instructions, parsed once per token request.
const fixtureOf = (req) => {
  try { return JSON.parse(req.body?.fixture ?? '{}') ?? {}; } catch { return {}; }
};

idp.service.on(Events.BeforeTokenSigning, (token, req) => {
  const f = fixtureOf(req);
  token.payload.sub ??= 'spec-user';
  for (const [k, v] of Object.entries(f.claims ?? {})) {
    if (v === null) delete token.payload[k];
    else token.payload[k] = v;
  }
  if (typeof f.exp_in === 'number') {
    token.payload.exp = now() + f.exp_in;
    if (f.exp_in < 0) token.payload.iat = token.payload.exp - 3600;
  }
  if (typeof f.nbf_in === 'number') token.payload.nbf = now() + f.nbf_in;
});

idp.service.on(Events.BeforeResponse, (response, req) => {
  const forge = fixtureOf(req).forge;
  const signed = response.body?.access_token;
  if (!forge || typeof signed !== 'string') return;
  const [h, p, s] = signed.split('.');
  const header = JSON.parse(Buffer.from(h, 'base64url'));
  const payload = JSON.parse(Buffer.from(p, 'base64url'));
  switch (forge) {
    case 'alg-none':
      response.body.access_token = `${b64url({ alg: 'none', typ: 'JWT' })}.${p}.`;
      break;
    case 'hmac-public-key': {
      const jwk = store.toJSON().find((k) => k.kid === header.kid);
      const pem = createPublicKey({ key: jwk, format: 'jwk' }).export({ type: 'spki', format: 'pem' });
      const input = `${b64url({ alg: 'HS256', typ: 'JWT', kid: header.kid })}.${p}`;
      response.body.access_token = `${input}.${createHmac('sha256', pem).update(input).digest('base64url')}`;
      break;
    }
    case 'changed-payload':
      response.body.access_token = `${h}.${b64url({ ...payload, sub: `${payload.sub}-admin`, scope: `${payload.scope ?? ''} admin`.trim() })}.${s}`;
      break;
    default:
      response.statusCode = 400;
      response.body = { error: 'invalid_request', error_description: `unknown forge ${forge}` };
  }
});

let rotations = 0;
idp.service.addRoute('POST', '/fixture/rotate', async (_req, res) => {
  rotations += 1;
  signingKid = `k${rotations + 1}`;
  await store.generate('RS256', { kid: signingKid });
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ kid: signingKid }));
});

await idp.start(0, '127.0.0.1');
process.stdout.write(`${JSON.stringify({ issuer: idp.issuer.url })}\n`);

const stop = async () => { await idp.stop().catch(() => {}); process.exit(0); };
process.stdin.on('end', stop);
process.stdin.on('close', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
