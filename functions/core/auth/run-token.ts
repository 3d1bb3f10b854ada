import { createHmac, hkdfSync, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../clock.ts';

/**
 * Short-lived credentials a run uses to call the platform as the resource's owner (an agent's MCP
 * clients calling the platform's MCP host), so agent sources hold no secrets. Stateless: an HMAC
 * over `{userId, expiry, keys}`, so minting one per chat costs no write and they expire by
 * themselves. They authenticate with the `role` scope: they may run and read, never manage.
 */
export interface RunTokens {
  mint(claims: RunTokenClaims, ttlMs: number): Promise<string>;
  /** The claims of a valid, unexpired token; null for anything else. */
  verify(token: string): Promise<RunTokenClaims | null>;
  /**
   * A browser's visitor id for one embed, signed under the same key. Not a credential: it
   * authenticates nothing by itself, it only lets the browser keep its id when it asks
   * `POST /embed/chat` for a new bearer, so its conversations stay its own.
   */
  mintVisitor(embedTokenId: string, visitorId: string, ttlMs: number): Promise<string>;
  /** The visitor id of a valid, unexpired visitor token issued through this embed; null for anything else. */
  verifyVisitor(token: string, embedTokenId: string): Promise<string | null>;
}

export interface RunTokenClaims {
  readonly userId: string;
  /** Keys runs made with the token may receive; null for all of the owner's. */
  readonly keys: readonly string[] | null;
  /**
   * When present, the only agents the token may chat with (or open a voice session with), and
   * nothing else: the credentials handed to browsers (embed visitors) and phone calls.
   */
  readonly agents?: readonly string[];
  /**
   * The embed token the credential was issued through (POST /embed/chat): each chat and call made
   * with it checks that embed's status and limits, so a revoked embed stops its visitors at once.
   */
  readonly embedTokenId?: string;
  /**
   * The embed visitor the credential was issued to (only with `embedTokenId`): conversations it
   * starts record it, and it may continue no others.
   */
  readonly visitorId?: string;
}

export const RUN_TOKEN_PREFIX = 'svc_run_';
export const VISITOR_TOKEN_PREFIX = 'svc_vis_';

interface Payload {
  readonly u: string;
  readonly e: number;
  readonly k: readonly string[] | null;
  readonly n: string;
  readonly a?: readonly string[];
  readonly b?: string;
  readonly v?: string;
}

interface VisitorPayload {
  readonly b: string;
  readonly v: string;
  readonly e: number;
}

/**
 * Visitor tokens are MACed with this prefix before the body, so no visitor token's signature can
 * ever pass for a run token's (and the reverse), though both use one key.
 */
const VISITOR_DOMAIN = 'svc-visitor-token.v1.';

/**
 * The 32-byte keys run tokens are signed and verified with. New tokens are signed with the first;
 * a token signed with any of them verifies, so a rotated-out key keeps working until the tokens it
 * signed expire.
 */
export interface RunTokenKeyRing {
  keys(): Promise<readonly [Buffer, ...Buffer[]]>;
  /**
   * Asked when a token verified under none of `keys()`: the ring may read its source again (another
   * execution environment may have seen a rotation first). Resolves whether the keys changed.
   */
  refresh?(): Promise<boolean>;
}

/** One key that never changes (the local platform's, derived from the master key; tests). */
export function fixedKeyRing(key: Buffer): RunTokenKeyRing {
  return { keys: async () => [key] };
}

/** HMAC-SHA256 run tokens under the keys the adapter supplies (derived locally, from Secrets Manager in the cloud). */
export function createRunTokens(ring: RunTokenKeyRing, clock: Clock): RunTokens {
  const hmac = (key: Buffer, body: string) => createHmac('sha256', key).update(body).digest();
  const sign = async (body: string) => hmac((await ring.keys())[0], body);
  const signedWithOneOf = (keys: readonly Buffer[], body: string, given: Buffer) =>
    keys.some((key) => {
      const expected = hmac(key, body);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  /** The decoded body of `prefix{body}.{signature}` when the signature is `domain + body`'s under one of the ring's keys; null otherwise. */
  const opened = async (token: string, prefix: string, domain: string): Promise<unknown> => {
    if (!token.startsWith(prefix) || token.length > 4096) return null;
    const [body, signature, extra] = token.slice(prefix.length).split('.');
    if (!body || !signature || extra !== undefined) return null;
    const given = Buffer.from(signature, 'base64url');
    const signed =
      signedWithOneOf(await ring.keys(), domain + body, given) ||
      ((await ring.refresh?.()) === true && signedWithOneOf(await ring.keys(), domain + body, given));
    if (!signed) return null;
    try {
      return JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as unknown;
    } catch {
      return null;
    }
  };
  const signVisitor = (body: string) => sign(VISITOR_DOMAIN + body);
  return {
    async mint(claims, ttlMs) {
      const payload: Payload = {
        u: claims.userId,
        e: clock.now() + ttlMs,
        k: claims.keys,
        n: randomBytes(9).toString('base64url'),
        ...(claims.agents === undefined ? {} : { a: claims.agents }),
        ...(claims.embedTokenId === undefined ? {} : { b: claims.embedTokenId }),
        // A visitor exists only within an embed: without one the claim would mean nothing.
        ...(claims.embedTokenId === undefined || claims.visitorId === undefined ? {} : { v: claims.visitorId }),
      };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${RUN_TOKEN_PREFIX}${body}.${(await sign(body)).toString('base64url')}`;
    },
    async verify(token) {
      const payload = (await opened(token, RUN_TOKEN_PREFIX, '')) as Payload | null;
      if (payload === null || typeof payload !== 'object') return null;
      if (typeof payload.u !== 'string' || typeof payload.e !== 'number' || payload.e <= clock.now()) return null;
      const keys = Array.isArray(payload.k) ? payload.k : null;
      if (payload.a === undefined) return { userId: payload.u, keys };
      // A malformed agent list must not widen the token to every agent.
      if (!Array.isArray(payload.a) || !payload.a.every((id) => typeof id === 'string')) return null;
      if (payload.b !== undefined && typeof payload.b !== 'string') return null;
      // Nor may a malformed (or embed-less) visitor claim make a visitor into the owner.
      if (payload.v !== undefined && (typeof payload.v !== 'string' || payload.b === undefined)) return null;
      return {
        userId: payload.u,
        keys,
        agents: payload.a,
        ...(payload.b === undefined ? {} : { embedTokenId: payload.b }),
        ...(payload.v === undefined ? {} : { visitorId: payload.v }),
      };
    },
    async mintVisitor(embedTokenId, visitorId, ttlMs) {
      const payload: VisitorPayload = { b: embedTokenId, v: visitorId, e: clock.now() + ttlMs };
      const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
      return `${VISITOR_TOKEN_PREFIX}${body}.${(await signVisitor(body)).toString('base64url')}`;
    },
    async verifyVisitor(token, embedTokenId) {
      const payload = (await opened(token, VISITOR_TOKEN_PREFIX, VISITOR_DOMAIN)) as VisitorPayload | null;
      if (payload === null || typeof payload !== 'object') return null;
      if (payload.b !== embedTokenId || typeof payload.v !== 'string' || payload.v.length === 0) return null;
      if (typeof payload.e !== 'number' || payload.e <= clock.now()) return null;
      return payload.v;
    },
  };
}

/** The local key: derived from the master key, so DATA_DIR holds one secret, not two. */
export function deriveRunTokenKey(masterKey: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', masterKey, Buffer.from('svc-run-token'), Buffer.from('v1'), 32));
}

/** A version of the run-token secret (Secrets Manager's staging labels). */
export type RunTokenSecretStage = 'AWSCURRENT' | 'AWSPREVIOUS';

/**
 * The cloud keys: the Secrets Manager secret's current value (signs) and previous one (still
 * verifies), each stretched to 32 bytes, so every function verifies what any other minted, across
 * a rotation too. They are read again after `maxAgeMs`, and at once (at most every
 * `minRefreshMs`) when a token verifies under neither: that token was signed by an environment
 * that saw the rotation first. `fetchSecret` resolves null for a stage with no version (no
 * rotation yet has made an AWSPREVIOUS).
 */
export function secretsManagerKeyRing(
  fetchSecret: (stage: RunTokenSecretStage) => Promise<string | null>,
  clock: Clock,
  { maxAgeMs = 5 * 60_000, minRefreshMs = 10_000 }: { maxAgeMs?: number; minRefreshMs?: number } = {},
): RunTokenKeyRing {
  const stretch = (secret: string) => {
    if (secret.length < 32) throw new Error('The run-token secret must be at least 32 characters');
    return deriveRunTokenKey(Buffer.from(secret, 'utf8'));
  };
  let loaded: { keys: Promise<readonly [Buffer, ...Buffer[]]>; at: number } | undefined;
  const load = () => {
    const keys = Promise.all([fetchSecret('AWSCURRENT'), fetchSecret('AWSPREVIOUS')]).then(([current, previous]): readonly [Buffer, ...Buffer[]] => {
      if (current === null) throw new Error('The run-token secret has no current value');
      return previous === null ? [stretch(current)] : [stretch(current), stretch(previous)];
    });
    const entry = { keys, at: clock.now() };
    loaded = entry;
    // A failed read is not kept: the next request tries again.
    keys.catch(() => {
      if (loaded === entry) loaded = undefined;
    });
    return keys;
  };
  return {
    keys: () => (loaded === undefined || clock.now() - loaded.at >= maxAgeMs ? load() : loaded.keys),
    async refresh() {
      if (loaded !== undefined && clock.now() - loaded.at < minRefreshMs) return false;
      const before = loaded === undefined ? undefined : await loaded.keys.catch(() => undefined);
      const after = await load();
      return before === undefined || !before[0].equals(after[0]);
    },
  };
}
