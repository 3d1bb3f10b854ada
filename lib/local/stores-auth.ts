/**
 * What the local stores' front checks before dynalite or s3rver sees a request (stores-process.ts):
 * AWS Signature Version 4 by the per-start credentials the platform holds (header-signed SDK calls
 * and presigned URLs), and S3 POST policies (browser form uploads). Neither stand-in checks them:
 * dynalite accepts any signature, s3rver any V4 signature and any policy.
 *
 * The canonical request and string to sign are the SDK's own (`SignatureV4Base` of
 * `@smithy/signature-v4`, which signs every platform call), so what is verified is exactly what
 * the SDK signed. Imported only by the stores' process, which is bundled with it.
 */
import { createHash, createHmac, timingSafeEqual, type BinaryLike } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { ALGORITHM_IDENTIFIER, createScope, getSigningKey, SignatureV4Base } from '@smithy/signature-v4';
import type { HttpRequest, QueryParameterBag, SourceData } from '@smithy/types';

export interface StoreCredentials {
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
}

/** Why a request was refused, in S3's and DynamoDB's own terms. */
export type Refusal = { readonly code: RefusalCode; readonly message: string };
export type RefusalCode = 'MissingAuthentication' | 'InvalidAccessKeyId' | 'SignatureDoesNotMatch' | 'ExpiredRequest' | 'MalformedRequest' | 'PolicyViolation';

/** How far a header-signed request's time may be from now, as S3 and DynamoDB allow. */
const MAX_SKEW_MS = 15 * 60_000;
/** The longest a presigned URL may live (SigV4's limit). */
const MAX_EXPIRES_SEC = 7 * 24 * 3600;

/** node:crypto in the shape the SDK's signer takes (`@smithy/hash-node`'s, which is not hoisted). */
class Sha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: SourceData): void {
    this.hash.update(bytes(data));
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.hash.digest()));
  }
}

function bytes(data: SourceData): BinaryLike {
  if (typeof data === 'string') return data;
  return data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** The SDK's canonicalisation, reached through its base class (the methods are protected there). */
class Canonical extends SignatureV4Base {
  constructor(service: string, uriEscapePath: boolean, credentials: StoreCredentials) {
    super({ service, region: 'us-east-1', credentials, sha256: Sha256, uriEscapePath });
  }

  async signature(request: HttpRequest, headers: Record<string, string>, payloadHash: string, longDate: string, region: string): Promise<string> {
    const credentials = await this.credentialProvider();
    const shortDate = longDate.slice(0, 8);
    const scope = createScope(shortDate, region, this.service);
    const stringToSign = await this.createStringToSign(longDate, scope, this.createCanonicalRequest(request, headers, payloadHash), ALGORITHM_IDENTIFIER);
    const key = await getSigningKey(Sha256, credentials, shortDate, region, this.service);
    return createHmac('sha256', key).update(stringToSign).digest('hex');
  }
}

/** One store's checker: its service name in the credential scope, and how the SDK escapes its paths. */
export interface StoreVerifier {
  /** Null when `request` carries a valid signature by the store's credentials, else why not. */
  verifyRequest(request: { readonly method: string; readonly url: string; readonly headers: IncomingHttpHeaders }, now?: Date): Promise<Refusal | null>;
  /**
   * Checks a form upload's fields (names lower-cased, those before the file) against its signed
   * policy. On success, the object's key and content type and the sizes the policy allows.
   */
  verifyPost(bucket: string, fields: ReadonlyMap<string, string>, now?: Date): Promise<Refusal | PostGrant>;
}

export interface PostGrant {
  readonly key: string;
  readonly contentType: string | undefined;
  readonly minBytes: number;
  readonly maxBytes: number;
}

/**
 * `service`: `s3` or `dynamodb`. S3 signs paths as they are sent; other services escape them
 * again (the SDK's `uriEscapePath`).
 */
export function storeVerifier(service: 's3' | 'dynamodb', credentials: StoreCredentials): StoreVerifier {
  const canonical = new Canonical(service, service !== 's3', credentials);

  /** Null when `credential` (`id/date/region/service/aws4_request`) names these credentials at `longDate`, else why not; with the region. */
  const checkScope = (credential: string, longDate: string): Refusal | { region: string } => {
    const [id, shortDate, region, scopeService, terminal, ...rest] = credential.split('/');
    if (id === undefined || shortDate === undefined || region === undefined || region === '' || terminal !== 'aws4_request' || rest.length > 0)
      return refusal('MalformedRequest', 'The credential is not <key>/<date>/<region>/<service>/aws4_request.');
    if (!safeEqual(id, credentials.accessKeyId)) return refusal('InvalidAccessKeyId', 'The access key id is not one of these stores.');
    if (scopeService !== service) return refusal('SignatureDoesNotMatch', `The credential is scoped to ${scopeService ?? 'nothing'}, not ${service}.`);
    if (!/^\d{8}T\d{6}Z$/.test(longDate) || shortDate !== longDate.slice(0, 8))
      return refusal('MalformedRequest', 'The signing date is missing or does not match the credential.');
    return { region };
  };

  return {
    async verifyRequest({ method, url, headers }, now = new Date()) {
      const queryAt = url.indexOf('?');
      const path = queryAt < 0 ? url : url.slice(0, queryAt);
      const query = parseQuery(queryAt < 0 ? '' : url.slice(queryAt + 1));
      if (query === null) return refusal('MalformedRequest', 'The query string is not valid percent-encoding.');
      const authorization = headers.authorization;
      const algorithm = single(query['X-Amz-Algorithm']);
      let credential: string, longDate: string, signedHeaders: string, signature: string, payloadHash: string;
      if (authorization !== undefined) {
        if (algorithm !== undefined) return refusal('MalformedRequest', 'Only one way of signing may be used.');
        const parsed = parseAuthorization(authorization);
        if (parsed === null) return refusal('MalformedRequest', 'The Authorization header is not AWS4-HMAC-SHA256 Credential, SignedHeaders, Signature.');
        ({ credential, signedHeaders, signature } = parsed);
        longDate = headerValue(headers['x-amz-date']) ?? '';
        // The SDK always sends the payload's hash: the signature covers it, and nothing else can sign.
        const hash = headerValue(headers['x-amz-content-sha256']);
        if (hash === undefined) return refusal('MalformedRequest', 'x-amz-content-sha256 is required.');
        payloadHash = hash;
        const skew = Math.abs(now.getTime() - parseLongDate(longDate));
        if (!(skew <= MAX_SKEW_MS)) return refusal('ExpiredRequest', 'The request time is more than 15 minutes from the stores’ time.');
      } else if (algorithm !== undefined) {
        if (algorithm !== ALGORITHM_IDENTIFIER) return refusal('MalformedRequest', `X-Amz-Algorithm must be ${ALGORITHM_IDENTIFIER}.`);
        credential = single(query['X-Amz-Credential']) ?? '';
        longDate = single(query['X-Amz-Date']) ?? '';
        signedHeaders = single(query['X-Amz-SignedHeaders']) ?? '';
        signature = single(query['X-Amz-Signature']) ?? '';
        // A presigned URL's body is not signed (the SDK's presigner says so in the URL).
        payloadHash = single(query['X-Amz-Content-Sha256']) ?? 'UNSIGNED-PAYLOAD';
        const expires = Number(single(query['X-Amz-Expires']));
        const signedAt = parseLongDate(longDate);
        if (!Number.isInteger(expires) || expires < 1 || expires > MAX_EXPIRES_SEC)
          return refusal('MalformedRequest', 'X-Amz-Expires must be 1 to 604800 seconds.');
        if (!(signedAt - now.getTime() <= MAX_SKEW_MS)) return refusal('MalformedRequest', 'The URL was signed in the future.');
        if (now.getTime() > signedAt + expires * 1000) return refusal('ExpiredRequest', 'The URL has expired.');
      } else {
        return refusal('MissingAuthentication', 'Every request to these stores must be signed by the platform.');
      }
      const scope = checkScope(credential, longDate);
      if ('code' in scope) return scope;
      const names = signedHeaders.split(';');
      if (!names.includes('host')) return refusal('MalformedRequest', 'The host header must be signed.');
      const canonicalHeaders: Record<string, string> = {};
      for (const name of names) {
        const value = headerValue(headers[name]);
        if (name === '' || name !== name.toLowerCase() || value === undefined) return refusal('SignatureDoesNotMatch', `The signed header ${name} is missing.`);
        canonicalHeaders[name] = canonicalHeaderValue(value);
      }
      const request = { method, protocol: 'http:', hostname: '', path, query, headers: canonicalHeaders } satisfies HttpRequest;
      const expected = await canonical.signature(request, canonicalHeaders, payloadHash, longDate, scope.region);
      return safeEqual(signature, expected) ? null : refusal('SignatureDoesNotMatch', 'The signature does not match the request.');
    },

    async verifyPost(bucket, fields, now = new Date()) {
      const policyText = fields.get('policy');
      const credential = fields.get('x-amz-credential');
      const longDate = fields.get('x-amz-date');
      const signature = fields.get('x-amz-signature');
      if (policyText === undefined || credential === undefined || longDate === undefined || signature === undefined)
        return refusal('MissingAuthentication', 'A form upload needs Policy, X-Amz-Credential, X-Amz-Date and X-Amz-Signature before its file.');
      if (fields.get('x-amz-algorithm') !== ALGORITHM_IDENTIFIER) return refusal('MalformedRequest', `X-Amz-Algorithm must be ${ALGORITHM_IDENTIFIER}.`);
      const scope = checkScope(credential, longDate);
      if ('code' in scope) return scope;
      const key = await getSigningKey(Sha256, credentials, longDate.slice(0, 8), scope.region, service);
      if (!safeEqual(signature, createHmac('sha256', key).update(policyText).digest('hex')))
        return refusal('SignatureDoesNotMatch', 'The policy signature does not match.');
      const policy = parsePolicy(policyText);
      if (policy === null) return refusal('MalformedRequest', 'The policy is not a valid POST policy.');
      if (!(now.getTime() < Date.parse(policy.expiration))) return refusal('ExpiredRequest', 'The policy has expired.');
      return checkPolicy(policy.conditions, bucket, fields);
    },
  };
}

/** Fields a policy need not name (AWS's rule): the signature's own and the file. */
const UNCONDITIONED_FIELDS = new Set(['policy', 'x-amz-signature', 'file']);

type Condition =
  { readonly op: 'eq' | 'starts-with'; readonly name: string; readonly value: string } | { readonly op: 'range'; readonly min: number; readonly max: number };

/** Every condition must hold, and every field must be named by one: a field the policy does not name (another `key`, a metadata header) is refused. */
function checkPolicy(conditions: readonly Condition[], bucket: string, fields: ReadonlyMap<string, string>): Refusal | PostGrant {
  const named = new Set<string>();
  let range: { min: number; max: number } | null = null;
  for (const condition of conditions) {
    if (condition.op === 'range') {
      if (range !== null) return refusal('MalformedRequest', 'The policy has more than one content-length-range.');
      range = condition;
      continue;
    }
    named.add(condition.name);
    const actual = condition.name === 'bucket' ? bucket : fields.get(condition.name);
    const holds = actual !== undefined && (condition.op === 'eq' ? actual === condition.value : actual.startsWith(condition.value));
    if (!holds) return refusal('PolicyViolation', `Invalid according to Policy: Policy Condition failed: ${condition.name}`);
  }
  for (const name of fields.keys())
    if (!UNCONDITIONED_FIELDS.has(name) && !name.startsWith('x-ignore-') && !named.has(name))
      return refusal('PolicyViolation', `Invalid according to Policy: Extra input fields: ${name}`);
  const key = fields.get('key');
  if (key === undefined || key === '') return refusal('PolicyViolation', 'The form has no key.');
  // These stores hold a form's file in memory until it is checked: no policy, no upload.
  if (range === null) return refusal('PolicyViolation', 'The policy sets no content-length-range.');
  return { key, contentType: fields.get('content-type'), minBytes: range.min, maxBytes: range.max };
}

function parsePolicy(text: string): { expiration: string; conditions: Condition[] } | null {
  let raw: unknown;
  try {
    raw = JSON.parse(Buffer.from(text, 'base64').toString('utf8'));
  } catch {
    return null;
  }
  if (typeof raw !== 'object' || raw === null) return null;
  const { expiration, conditions } = raw as { expiration?: unknown; conditions?: unknown };
  if (typeof expiration !== 'string' || !Array.isArray(conditions)) return null;
  const parsed: Condition[] = [];
  for (const condition of conditions as unknown[]) {
    if (Array.isArray(condition)) {
      const [op, first, second] = condition as unknown[];
      const name = typeof op === 'string' ? op.toLowerCase() : '';
      if (name === 'content-length-range' && Number.isSafeInteger(first) && Number.isSafeInteger(second) && condition.length === 3) {
        parsed.push({ op: 'range', min: first as number, max: second as number });
      } else if (
        (name === 'eq' || name === 'starts-with') &&
        typeof first === 'string' &&
        first.startsWith('$') &&
        typeof second === 'string' &&
        condition.length === 3
      ) {
        parsed.push({ op: name, name: first.slice(1).toLowerCase(), value: second });
      } else {
        return null;
      }
    } else if (typeof condition === 'object' && condition !== null) {
      const entries = Object.entries(condition);
      const [entry] = entries;
      if (entries.length !== 1 || entry === undefined || typeof entry[1] !== 'string') return null;
      parsed.push({ op: 'eq', name: entry[0].toLowerCase(), value: entry[1] });
    } else {
      return null;
    }
  }
  return { expiration, conditions: parsed };
}

/** `Credential=…, SignedHeaders=…, Signature=…` of an AWS4-HMAC-SHA256 Authorization header. */
function parseAuthorization(header: string): { credential: string; signedHeaders: string; signature: string } | null {
  const prefix = `${ALGORITHM_IDENTIFIER} `;
  if (!header.startsWith(prefix)) return null;
  const parts = new Map<string, string>();
  for (const part of header.slice(prefix.length).split(',')) {
    const at = part.indexOf('=');
    if (at < 0) return null;
    const name = part.slice(0, at).trim();
    if (parts.has(name)) return null;
    parts.set(name, part.slice(at + 1).trim());
  }
  const credential = parts.get('Credential');
  const signedHeaders = parts.get('SignedHeaders');
  const signature = parts.get('Signature');
  if (parts.size !== 3 || credential === undefined || signedHeaders === undefined || signature === undefined) return null;
  return { credential, signedHeaders, signature };
}

/**
 * The query as the SDK held it when signing: decoded names and values, repeated names as lists,
 * a name without `=` as an empty value. Null when it is not valid percent-encoding.
 */
function parseQuery(text: string): QueryParameterBag | null {
  const query: Record<string, string | string[]> = {};
  if (text === '') return query;
  try {
    for (const pair of text.split('&')) {
      if (pair === '') continue;
      const at = pair.indexOf('=');
      const name = decodeURIComponent(at < 0 ? pair : pair.slice(0, at));
      const value = at < 0 ? '' : decodeURIComponent(pair.slice(at + 1));
      if (name === '__proto__') return null;
      const existing = query[name];
      query[name] = existing === undefined ? value : [...(Array.isArray(existing) ? existing : [existing]), value];
    }
  } catch {
    return null;
  }
  return query;
}

function single(value: string | string[] | null | undefined): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(',') : value;
}

/** The SDK's canonical header value (`getCanonicalHeaders`): line breaks and runs of blanks as one space, trimmed. */
function canonicalHeaderValue(value: string): string {
  return value
    .replace(/[\r\n]/g, ' ')
    .replace(/[ \t]+/g, ' ')
    .replace(/^ | $/g, '');
}

/** Milliseconds of a SigV4 date (`20260102T030405Z`); NaN when it is not one. */
function parseLongDate(longDate: string): number {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(longDate);
  return match === null ? Number.NaN : Date.parse(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}Z`);
}

function safeEqual(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

function refusal(code: RefusalCode, message: string): Refusal {
  return { code, message };
}
