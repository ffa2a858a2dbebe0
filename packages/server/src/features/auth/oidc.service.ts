import { coded } from '@signalbox/contracts';
import type { Configuration } from 'openid-client';
import { findUserById, type UserRow } from '../../access/principals.store';
import type { OidcProviderConfig } from '../../config';
import type { Deps } from '../../deps';
import { AppError, badRequest, forbidden, found, notFound, unauthorized } from '../../lib/errors';
import { findUserByLogin } from '../users';
import { createExternalUser } from './external-user';

/** What the browser carries between the login redirect and the callback (sealed in a short-lived cookie). */
export type PendingSignIn = {
  /** provider id */
  p: string;
  state: string;
  nonce: string;
  /** PKCE code verifier */
  verifier: string;
  /** the redirect_uri sent to the provider; the token request must repeat it */
  redirectUri: string;
  /** where the browser goes after signing in, relative to the web root */
  to: string;
  /** expiry, epoch ms */
  exp: number;
};

export const PENDING_TTL_MS = 10 * 60 * 1000;

export type Claims = Record<string, unknown>;

/** Loopback issuers may speak plain HTTP (local development and the tests); every other issuer needs HTTPS. */
export function isLoopbackHttp(url: URL) {
  return url.protocol === 'http:' && ['127.0.0.1', 'localhost', '[::1]', '::1'].includes(url.hostname);
}

/** A provider from configuration, or 404. */
export function findProvider(deps: Pick<Deps, 'config'>, id: string): OidcProviderConfig {
  const providers = deps.config.oidcProviders ?? {};
  const provider = Object.hasOwn(providers, id) ? providers[id] : undefined;
  if (!provider) throw notFound('provider');
  return provider;
}

export const providerName = (id: string, p: OidcProviderConfig) => p.display_name || id;

/** The path of the configured web root ("" when the console is served at "/"). */
export function webBasePath(webRoot: string): string {
  if (!webRoot) return '';
  try {
    return new URL(webRoot).pathname.replace(/\/+$/, '');
  } catch {
    return `/${webRoot.replace(/^\/+|\/+$/g, '')}`.replace(/^\/$/, '');
  }
}

/**
 * A same-origin path to send the browser to after signing in. Anything that would leave the site (another host,
 * a scheme, "//host") becomes "/".
 */
export function safeLocalPath(path: string | undefined): string {
  if (!path) return '/';
  const base = 'http://signalbox.invalid';
  try {
    const url = new URL(path.startsWith('/') ? path : `/${path}`, base);
    if (url.origin !== base) return '/';
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return '/';
  }
}

/** openid-client, loaded on the first sign-in: a server without OIDC providers never needs it. */
const openidClient = () => import('openid-client');

/** Discovery results are cached per provider; a failed discovery is retried on the next sign-in. */
export function createOidcClients(timeoutSeconds = 10) {
  const cache = new Map<string, Promise<Configuration>>();

  async function discover(p: OidcProviderConfig): Promise<Configuration> {
    if (!p.provider_url) throw new Error('provider_url is not set');
    const issuer = new URL(p.provider_url);
    const client = await openidClient();
    return client.discovery(issuer, p.client_id, p.client_secret || undefined, undefined, {
      execute: isLoopbackHttp(issuer) ? [client.allowInsecureRequests] : [],
      timeout: timeoutSeconds,
    });
  }

  return {
    async get(id: string, p: OidcProviderConfig): Promise<Configuration> {
      const key = `${id}\n${p.provider_url}\n${p.client_id}`;
      let found = cache.get(key);
      if (!found) {
        found = discover(p);
        cache.set(key, found);
        found.catch(() => cache.delete(key));
      }
      try {
        return await found;
      } catch (err) {
        throw new AppError(
          502,
          coded('oidc_unreachable', {
            provider: providerName(id, p),
            detail: (err as Error).message.slice(0, 200),
          }),
        );
      }
    },
  };
}

export type OidcClients = ReturnType<typeof createOidcClients>;

/** Starts a sign-in: the provider URL to send the browser to, and what to remember until the callback. */
export async function beginSignIn(
  config: Configuration,
  p: OidcProviderConfig,
  id: string,
  redirectUri: string,
  to: string,
): Promise<{ url: URL; pending: PendingSignIn }> {
  const client = await openidClient();
  const verifier = client.randomPKCECodeVerifier();
  const pending: PendingSignIn = {
    p: id,
    state: client.randomState(),
    nonce: client.randomNonce(),
    verifier,
    redirectUri,
    to: safeLocalPath(to),
    exp: Date.now() + PENDING_TTL_MS,
  };
  const scopes = new Set(['openid', ...p.scopes]);
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: [...scopes].join(' '),
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state: pending.state,
    nonce: pending.nonce,
  });
  return { url, pending };
}

/** Checks what came back from the browser before any network call; every failure is a 4xx a person can act on. */
export function checkCallback(
  id: string,
  p: OidcProviderConfig,
  pending: PendingSignIn | null,
  query: Record<string, unknown>,
): PendingSignIn {
  const name = providerName(id, p);
  if (typeof query.error === 'string') {
    const detail = typeof query.error_description === 'string' ? query.error_description : query.error;
    throw unauthorized(coded('oidc_refused', { provider: name, detail: detail.slice(0, 200) }));
  }
  if (!pending || pending.p !== id || pending.exp < Date.now())
    throw badRequest(coded('oidc_expired', { provider: name }));
  if (typeof query.state !== 'string' || query.state !== pending.state)
    throw badRequest(coded('oidc_state_mismatch'));
  if (typeof query.code !== 'string' || query.code === '') throw badRequest(coded('oidc_no_code'));
  return pending;
}

/** Exchanges the code (PKCE, state and nonce checked) and returns the ID token claims merged with userinfo. */
export async function finishSignIn(
  config: Configuration,
  id: string,
  p: OidcProviderConfig,
  pending: PendingSignIn,
  query: Record<string, unknown>,
  log: Deps['log'],
): Promise<Claims> {
  const current = new URL(pending.redirectUri);
  for (const [k, v] of Object.entries(query)) if (typeof v === 'string') current.searchParams.set(k, v);
  const client = await openidClient();
  try {
    const tokens = await client.authorizationCodeGrant(config, current, {
      pkceCodeVerifier: pending.verifier,
      expectedState: pending.state,
      expectedNonce: pending.nonce,
      idTokenExpected: true,
    });
    const claims: Claims = { ...(tokens.claims() ?? {}) };
    if (config.serverMetadata().userinfo_endpoint) {
      try {
        const info = await client.fetchUserInfo(config, tokens.access_token, String(claims.sub));
        Object.assign(claims, info);
      } catch (err) {
        // The ID token already names the user; a failing userinfo endpoint only loses extra claims.
        log.warn({ provider: id, err: (err as Error).message }, 'OIDC userinfo request failed');
      }
    }
    return claims;
  } catch (err) {
    const code = (err as { error?: unknown }).error;
    const cause = (err as { cause?: unknown }).cause;
    log.warn(
      {
        provider: id,
        err: (err as Error).message,
        cause: cause instanceof Error ? cause.message : undefined,
      },
      'OIDC code exchange failed',
    );
    throw unauthorized(
      coded('oidc_failed', {
        provider: providerName(id, p),
        detail: typeof code === 'string' ? ` (${code})` : '',
      }),
    );
  }
}

const claim = (claims: Claims, name: string): string => {
  const v = claims[name];
  return typeof v === 'string' ? v.trim() : typeof v === 'number' ? String(v) : '';
};

/**
 * The user for a provider's claims: an existing external user with that username or e-mail, or a new
 * `external`, non-admin user without projects (as the peer does). A matching local (password) user is refused,
 * as the peer refuses it ("OIDC user conflicts with local user").
 */
export async function userForClaims(
  deps: Pick<Deps, 'db' | 'dialect'>,
  id: string,
  p: OidcProviderConfig,
  claims: Claims,
): Promise<UserRow> {
  const email = claim(claims, p.email_claim).slice(0, 255);
  if (!email.includes('@'))
    throw unauthorized(coded('oidc_no_email', { provider: providerName(id, p), claim: p.email_claim }));
  const username = (claim(claims, p.username_claim) || email).replace(/\s+/g, '_').slice(0, 255);
  const name = (claim(claims, p.name_claim) || username).slice(0, 255);

  const existing = (await findUserByLogin(deps.db, username)) ?? (await findUserByLogin(deps.db, email));
  if (existing) {
    // A provider must not open a password account just by naming it (an IdP user could call itself "admin").
    if (existing.external !== 1)
      throw forbidden(coded('oidc_local_account', { provider: providerName(id, p) }));
    return existing;
  }
  const userId = await createExternalUser(deps, { username, name, email }, providerName(id, p));
  return found(await findUserById(deps.db, userId), 'user');
}
