// npm oidc-provider (a certified OpenID provider) for the end-to-end sign-in
// (tests/auth/signin_test.py, issue 30 §2). Started by the test, not a token issuer of our
// own: dynamic client registration, PKCE, the development login and consent pages
// (devInteractions: any login, any password), and RFC 8707 resource indicators — an
// access token asked for with `resource=R` is a JWT whose `aud` is R, signed with the
// provider's RS256 key, for the resources named in SIGNIN_RESOURCES only (any other is
// refused with invalid_target).
//
// usage: node signin_provider.mjs  (env SIGNIN_PORT, SIGNIN_RESOURCES="url url ...")
// Prints one JSON line {"issuer": ...} once it listens, then a JSON line per request
// to its JWKS ({"jwks": n}: the test counts key fetches); runs until killed.
import Provider, { errors } from 'oidc-provider';

const port = Number(process.env.SIGNIN_PORT);
const resources = new Set((process.env.SIGNIN_RESOURCES ?? '').split(/\s+/).filter(Boolean));
const SCOPES = 'boris:read boris:edit boris:exec';
const issuer = `http://127.0.0.1:${port}`;

const provider = new Provider(issuer, {
  // No `clients`: the MCP client registers itself (RFC 7591), as a client meeting Boris does.
  features: {
    devInteractions: { enabled: true },
    registration: { enabled: true },
    resourceIndicators: {
      enabled: true,
      // One resource per token: the one the client asked for at the authorization endpoint.
      defaultResource: (ctx, client, oneOf) => oneOf ?? undefined,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resourceIndicator) => {
        if (!resources.has(resourceIndicator)) throw new errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience: resourceIndicator,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
  // The MCP client asks for the scopes Boris's challenge names (no `openid`): a plain
  // OAuth 2.1 authorization-code grant for an access token. Registration accepts a client
  // whose `scope` lists only scopes named here.
  scopes: ['openid', 'offline_access', ...SCOPES.split(' ')],
  pkce: { required: () => true },
  // Loopback redirect URIs over http, as native and CLI clients use (RFC 8252 §7.3).
  clientDefaults: { token_endpoint_auth_method: 'none' },
});
provider.proxy = false;
let jwksFetches = 0;
provider.use(async (ctx, next) => {
  if (ctx.path === '/jwks') console.log(JSON.stringify({ jwks: ++jwksFetches }));
  await next();
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

provider.listen(port, '127.0.0.1', () => console.log(JSON.stringify({ issuer })));
