// An OpenID provider for the single sign-on tests: the OpenID-certified oidc-provider with its
// own login page, the users below and the clients the test hands in. Loopback only.
//
//   node provider.mjs   with IDP_PORT, IDP_ISSUER, IDP_JWKS (a file of private JWKs) and
//                       IDP_CLIENTS (a JSON list of oidc-provider client metadata)
//
// It prints "listening" once it answers; tests/idp_server.py starts and stops it.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import Provider from 'oidc-provider';

const USERS = {
  alice: { password: 'alice-sso-password', name: 'Alice Example', email: 'alice@example.org' },
  bob: { password: 'bob-sso-password', name: 'Bob Example', email: 'bob@example.org' },
  // Known to the provider, not to the portal: for "not allowed" and auto-creation.
  zoe: { password: 'zoe-sso-password', name: 'Zoe Example', email: 'zoe@example.org' },
};

const issuer = process.env.IDP_ISSUER;
const port = Number(process.env.IDP_PORT);
const jwks = JSON.parse(readFileSync(process.env.IDP_JWKS, 'utf8'));
const clients = JSON.parse(process.env.IDP_CLIENTS);

const provider = new Provider(issuer, {
  clients,
  jwks,
  cookies: { keys: ['test-idp-cookie-key-not-secret'] },
  claims: {
    openid: ['sub'],
    profile: ['name', 'preferred_username'],
    email: ['email', 'email_verified'],
  },
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    rpInitiatedLogout: {
      enabled: true,
      logoutSource: async (ctx, form) => {
        ctx.body = page('Sign out', `${form}<p>Sign out of the Test Identity Provider too?</p>
<button type="submit" form="op.logoutForm" name="logout" value="yes" id="idp-logout">Yes, sign me out</button>`);
      },
    },
  },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  // The subject is not the login, as at most real providers: the portal must map the claim.
  findAccount: async (ctx, id) => {
    const user = USERS[id];
    if (!user) return undefined;
    return {
      accountId: id,
      claims: async () => ({
        sub: `sub-${id}-0001`,
        preferred_username: id,
        name: user.name,
        email: user.email,
        email_verified: true,
      }),
    };
  },
});

const escape = (text) => String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(title, body) {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8">
<title>Test Identity Provider · ${title}</title>
<style>body{font-family:sans-serif;background:#1d3557;color:#f1faee;display:grid;place-items:center;min-height:90vh}
form{background:#f1faee;color:#1d3557;padding:2rem;border-radius:8px;display:grid;gap:.6rem;min-width:20rem}
button{background:#a4161a;color:white;border:0;padding:.6rem;font-size:1rem;border-radius:4px}</style></head>
<body><main><h1>Test Identity Provider</h1>${body}</main></body></html>`;
}

function loginPage(uid, clientId, error) {
  return page('Sign-in', `
<form method="post" action="/interaction/${escape(uid)}/login" autocomplete="off">
<p>Sign in to continue to <strong>${escape(clientId)}</strong></p>
${error ? `<p role="alert" id="idp-error">${escape(error)}</p>` : ''}
<label for="username">Username</label><input id="username" name="username" required autofocus>
<label for="password">Password</label><input id="password" name="password" type="password" required>
<button type="submit" id="idp-submit">Sign in at the provider</button>
</form>`);
}

async function readForm(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

async function grantConsent(details) {
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({ accountId: details.session.accountId, clientId: details.params.client_id });
  const missing = details.prompt.details;
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes || {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return { consent: { grantId: await grant.save() } };
}

provider.use(async (ctx, next) => {
  const match = ctx.path.match(/^\/interaction\/([^/]+)(\/login)?$/);
  if (!match) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  const clientId = details.params.client_id;
  if (details.prompt.name === 'consent') {
    // A first-party portal: consent is implied, as sites configure it for their own services.
    const url = await provider.interactionResult(ctx.req, ctx.res, await grantConsent(details), {
      mergeWithLastSubmission: true,
    });
    ctx.status = 303;
    return ctx.redirect(url);
  }
  if (ctx.method === 'GET') {
    ctx.type = 'html';
    ctx.body = loginPage(details.uid, clientId);
    return undefined;
  }
  const form = await readForm(ctx.req);
  const username = form.get('username') || '';
  const user = USERS[username];
  if (!user || user.password !== form.get('password')) {
    ctx.status = 401;
    ctx.type = 'html';
    ctx.body = loginPage(details.uid, clientId, 'Wrong username or password.');
    return undefined;
  }
  const url = await provider.interactionResult(
    ctx.req, ctx.res, { login: { accountId: username } }, { mergeWithLastSubmission: false },
  );
  ctx.status = 303;
  return ctx.redirect(url);
});

createServer(provider.callback()).listen(port, '127.0.0.1', () => {
  console.log(`listening ${issuer}`);
});
