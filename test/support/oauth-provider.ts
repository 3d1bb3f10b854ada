import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const CLIENT_ID = 'platform-client-a';
/** Characters that change under form encoding, to prove RFC 6749 2.3.1 Basic credentials. */
export const CLIENT_SECRET = 'client secret&+/A';

/** What the fake provider answers for one code. */
export type Outcome = 'tokens' | 'access-only' | 'server-error' | 'no-access-token';

export interface Grant {
  readonly challenge: string;
  readonly redirectUri: string;
  readonly outcome: Outcome;
  readonly accessToken: string;
  readonly refreshToken: string;
}

/**
 * A tiny OAuth 2.0 authorization server on loopback. The test plays the browser: it reads the
 * challenge and redirect URI from the platform's authorization URL and registers a code for them,
 * as a real provider would on the user's consent. The token endpoint then checks what RFC 6749
 * 4.1.3 and RFC 7636 4.6 say it must, and answers like a real provider (400 `invalid_grant` on any
 * mismatch).
 */
export class FakeProvider {
  readonly grants = new Map<string, Grant>();
  /** Every verifier the token endpoint received, so the test can prove it never left the platform otherwise. */
  readonly verifiers: string[] = [];
  exchanges = 0;
  lastRefusal: string | null = null;
  /**
   * When set, `GET /authorize` consents at once, as a real provider does after the user's click:
   * it registers a fresh code and redirects to the callback, so a client following redirects
   * (the README walkthrough's `curl -L`) plays the browser without the test's help.
   */
  autoConsent = false;
  private consents = 0;
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req).then(({ status, body, contentType, location }) => {
        res.writeHead(status, { 'content-type': contentType ?? 'application/json', ...(location ? { location } : {}) });
        res.end(typeof body === 'string' ? body : JSON.stringify(body));
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }

  /** The user consented: `code` is now valid once, for this challenge and redirect URI. */
  register(code: string, authorizationUrl: string, outcome: Outcome = 'tokens'): Grant {
    const url = new URL(authorizationUrl);
    const grant: Grant = {
      challenge: url.searchParams.get('code_challenge') ?? '',
      redirectUri: url.searchParams.get('redirect_uri') ?? '',
      outcome,
      accessToken: `at-${code}-AAAAAAAAAAAAAAAAAAAAAAAA`,
      refreshToken: `rt-${code}-RRRRRRRRRRRRRRRRRRRRRRRR`,
    };
    this.grants.set(code, grant);
    return grant;
  }

  private consent(authorizationUrl: URL) {
    this.consents += 1;
    const code = `auto-${this.consents}`;
    const grant = this.register(code, authorizationUrl.toString());
    const callback = new URL(grant.redirectUri);
    callback.searchParams.set('code', code);
    callback.searchParams.set('state', authorizationUrl.searchParams.get('state') ?? '');
    return { status: 302, body: '', contentType: 'text/plain', location: callback.toString() };
  }

  private async handle(req: IncomingMessage): Promise<{ status: number; body: unknown; contentType?: string; location?: string }> {
    if (this.autoConsent && req.method === 'GET' && (req.url ?? '').startsWith('/authorize?')) return this.consent(new URL(req.url ?? '', this.url));
    if (req.method !== 'POST' || req.url !== '/token') return { status: 404, body: { error: 'not_found' } };
    this.exchanges += 1;
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const refuse = (why: string) => {
      this.lastRefusal = why;
      return { status: 400, body: { error: 'invalid_grant', error_description: why } };
    };
    if (!(req.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded')) return refuse('not form-encoded');
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const basic = /^Basic (.+)$/.exec(req.headers['authorization'] ?? '');
    if (basic === null) return { status: 401, body: { error: 'invalid_client' } };
    const [id, secret] = Buffer.from(basic[1]!, 'base64')
      .toString('utf8')
      .split(':')
      .map((part) => new URLSearchParams(`v=${part}`).get('v'));
    if (id !== CLIENT_ID || secret !== CLIENT_SECRET) return { status: 401, body: { error: 'invalid_client' } };
    if (form.get('grant_type') !== 'authorization_code') return refuse('grant_type');
    if (form.get('client_id') !== CLIENT_ID) return refuse('client_id');
    const grant = this.grants.get(form.get('code') ?? '');
    if (grant === undefined) return refuse('unknown or used code');
    this.grants.delete(form.get('code') ?? '');
    if (form.get('redirect_uri') !== grant.redirectUri) return refuse('redirect_uri');
    const verifier = form.get('code_verifier') ?? '';
    this.verifiers.push(verifier);
    if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier)) return refuse('verifier shape');
    if (createHash('sha256').update(verifier, 'ascii').digest('base64url') !== grant.challenge) return refuse('PKCE verification failed');
    if (grant.outcome === 'server-error') return { status: 500, body: 'upstream exploded', contentType: 'text/plain' };
    if (grant.outcome === 'no-access-token') return { status: 200, body: { token_type: 'Bearer' } };
    return {
      status: 200,
      body: {
        access_token: grant.accessToken,
        token_type: 'Bearer',
        expires_in: 3600,
        scope: 'read:user repo',
        ...(grant.outcome === 'tokens' ? { refresh_token: grant.refreshToken } : {}),
      },
    };
  }
}
