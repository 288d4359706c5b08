// A real OpenID provider (the certified `oidc-provider` package) for agentgov's SSO
// integration tests. It listens on 127.0.0.1 (plain http, loopback only) and completes the
// login and consent interactions by itself, so a test client goes from the authorization URL
// to its redirect URI with nothing but HTTP requests that follow redirects with a cookie jar.
//
//   node server.mjs [--port 0] [--config config.json] [--exit-on-stdin-close]
//
// The config (a file, or the JSON itself in the IDP_CONFIG environment variable) is
//   { "clients":  [{ "client_id", "client_secret", "redirect_uris", ...more client metadata }],
//     "accounts": [{ "sub", "email", "email_verified", "name" }] }
// Once listening it prints one line to stdout: {"issuer":"http://127.0.0.1:PORT"}.
// Errors go to stderr.

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

import Provider from 'oidc-provider';

// stdout carries the ready line alone: oidc-provider's notices (console.info) go to stderr.
console.log = console.error;
console.info = console.error;

const { values: args } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    config: { type: 'string' },
    'exit-on-stdin-close': { type: 'boolean', default: false },
  },
});

function fail(message) {
  process.stderr.write(`test IdP: ${message}\n`);
  process.exit(1);
}

let config;
try {
  const text = args.config ? readFileSync(args.config, 'utf8') : process.env.IDP_CONFIG;
  if (!text) fail('give the config with --config FILE or the IDP_CONFIG environment variable');
  config = JSON.parse(text);
} catch (err) {
  fail(`cannot read the config: ${err.message}`);
}
const accounts = Array.isArray(config.accounts) ? config.accounts : [];
const clients = (Array.isArray(config.clients) ? config.clients : []).map((client) => ({
  grant_types: ['authorization_code'],
  response_types: ['code'],
  token_endpoint_auth_method: 'client_secret_basic',
  ...client,
}));
if (clients.length === 0) fail('the config has no clients');
if (accounts.length === 0) fail('the config has no accounts');

const accountBySub = new Map(accounts.map((a) => [String(a.sub), a]));

// The account an authorization request asks for: the one whose email is its login_hint, the
// first one when it gives none.
function accountFor(loginHint) {
  if (!loginHint) return accounts[0];
  const hint = String(loginHint).toLowerCase();
  return accounts.find((a) => String(a.email).toLowerCase() === hint);
}

// A fresh signing key every run (RS256).
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: randomBytes(8).toString('hex'), use: 'sig', alg: 'RS256' };

let provider;

// Completes whichever prompt the interaction is at: login (the account of the login_hint) or
// consent (everything the request asked for).
async function interaction(req, res) {
  const details = await provider.interactionDetails(req, res);
  const { prompt, params, session } = details;
  if (prompt.name === 'login') {
    const account = accountFor(params.login_hint);
    if (!account) {
      await provider.interactionFinished(req, res, {
        error: 'login_required',
        error_description: `no test account has the email ${params.login_hint}`,
      }, { mergeWithLastSubmission: false });
      return;
    }
    await provider.interactionFinished(req, res, { login: { accountId: String(account.sub) } });
    return;
  }
  if (prompt.name === 'consent') {
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
    const missing = prompt.details;
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
      grant.addResourceScope(indicator, scopes.join(' '));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
    return;
  }
  await provider.interactionFinished(req, res, {
    error: 'interaction_required',
    error_description: `the test IdP cannot complete the prompt ${prompt.name}`,
  }, { mergeWithLastSubmission: false });
}

// `POST /test/accounts {"sub", ...claims}`: changes an account's claims (its e-mail, say)
// from then on, as a user or an administrator would at a real provider.
function updateAccount(req, res) {
  let body = '';
  req.on('data', (chunk) => { body += chunk; });
  req.on('end', () => {
    try {
      const change = JSON.parse(body);
      const account = accountBySub.get(String(change.sub));
      if (!account) {
        res.statusCode = 404;
        res.end('no such account\n');
        return;
      }
      Object.assign(account, change);
      res.statusCode = 204;
      res.end();
    } catch (err) {
      res.statusCode = 400;
      res.end(`bad account change: ${err.message}\n`);
    }
  });
}

const server = createServer((req, res) => {
  if (req.method === 'POST' && req.url === '/test/accounts') {
    updateAccount(req, res);
    return;
  }
  if (req.url.startsWith('/interaction/')) {
    interaction(req, res).catch((err) => {
      process.stderr.write(`test IdP: interaction failed: ${err.stack || err}\n`);
      if (!res.headersSent) res.statusCode = 500;
      res.end(`interaction failed: ${err.message}\n`);
    });
    return;
  }
  provider.callback()(req, res);
});

server.listen(Number(args.port), '127.0.0.1', () => {
  const { port } = server.address();
  const issuer = `http://127.0.0.1:${port}`;
  provider = new Provider(issuer, {
    clients,
    jwks: { keys: [signingKey] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    claims: {
      openid: ['sub'],
      email: ['email', 'email_verified'],
      profile: ['name'],
    },
    // The scope's claims go into the ID token too, not only to the userinfo endpoint.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    ttl: {
      AccessToken: 3600,
      AuthorizationCode: 600,
      Grant: 3600,
      IdToken: 3600,
      Interaction: 600,
      Session: 3600,
    },
    responseTypes: ['code'],
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx, i) => `/interaction/${i.uid}` },
    async findAccount(_ctx, sub) {
      const account = accountBySub.get(String(sub));
      if (!account) return undefined;
      return {
        accountId: String(account.sub),
        async claims() {
          const claims = { sub: String(account.sub) };
          for (const key of ['email', 'email_verified', 'name']) {
            if (account[key] !== undefined) claims[key] = account[key];
          }
          return claims;
        },
      };
    },
    // Its error pages say what went wrong (a test reads them when a flow fails).
    async renderError(ctx, out) {
      ctx.type = 'json';
      ctx.body = out;
    },
  });
  for (const event of ['server_error', 'authorization.error', 'grant.error', 'userinfo.error', 'jwks.error']) {
    provider.on(event, (_ctx, err) => {
      process.stderr.write(`test IdP: ${event}: ${err.message}${err.error_description ? ` (${err.error_description})` : ''}\n`);
    });
  }
  process.stdout.write(`${JSON.stringify({ issuer })}\n`);
});
server.on('error', (err) => fail(`cannot listen: ${err.message}`));

// Started by a test: go when the test process does (its end of our stdin closes).
if (args['exit-on-stdin-close']) {
  process.stdin.on('end', () => process.exit(0));
  process.stdin.on('error', () => process.exit(0));
  process.stdin.resume();
}
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(0));
