import type { APIGatewayProxyEvent, APIGatewayProxyEventV2 } from 'aws-lambda';

/** The parts of an HTTP request handlers see, independent of the event shape that carried it. */
export interface HttpRequest {
  readonly method: string;
  /** Path relative to the route's host (no stage, no local host prefix). */
  readonly path: string;
  readonly pathParams: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string>>;
  /**
   * The query exactly as the client sent it, without the `?` (`''` when there is none), for checks
   * over the URL as received (Twilio signs its webhook URL byte for byte). Absent behind API Gateway
   * REST (v1), which passes on only the decoded parameters.
   */
  readonly rawQuery?: string;
  /** Lower-cased names; repeated headers joined with `, `. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer | null;
  readonly sourceIp: string;
  readonly requestId: string;
  /** Public URL of the host this request arrived on, e.g. `https://abc.execute-api.../prod`. */
  readonly baseUrl: string;
}

function lowerCaseHeaders(headers: Record<string, string | undefined> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers ?? {})) {
    if (value === undefined) continue;
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]}, ${value}`;
  }
  return out;
}

function definedValues(record: Record<string, string | undefined> | null | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(record ?? {})) if (v !== undefined) out[k] = v;
  return out;
}

function bodyOf(body: string | null | undefined, isBase64Encoded: boolean): Buffer | null {
  if (body === null || body === undefined || body === '') return null;
  return Buffer.from(body, isBase64Encoded ? 'base64' : 'utf8');
}

/** From an API Gateway REST (v1) proxy event. */
export function fromRestEvent(event: APIGatewayProxyEvent): HttpRequest {
  return {
    method: event.httpMethod.toUpperCase(),
    path: event.path,
    pathParams: definedValues(event.pathParameters),
    query: definedValues(event.queryStringParameters),
    headers: lowerCaseHeaders(event.headers),
    body: bodyOf(event.body, event.isBase64Encoded),
    sourceIp: event.requestContext?.identity?.sourceIp ?? '',
    requestId: event.requestContext?.requestId ?? '',
    baseUrl: restBaseUrl(event),
  };
}

/** From a Lambda function URL (v2) event; path parameters come from the platform's own route match. */
export function fromUrlEvent(event: APIGatewayProxyEventV2, path: string, pathParams: Record<string, string>): HttpRequest {
  return {
    method: event.requestContext.http.method.toUpperCase(),
    path,
    pathParams,
    query: definedValues(event.queryStringParameters),
    rawQuery: event.rawQueryString,
    headers: lowerCaseHeaders(event.headers),
    body: bodyOf(event.body, event.isBase64Encoded),
    sourceIp: event.requestContext.http.sourceIp,
    requestId: event.requestContext.requestId,
    baseUrl: `${schemeOf(event.headers['x-forwarded-proto'])}://${event.requestContext.domainName}`,
  };
}

/**
 * The stage appears in the URL only on the default execute-api host, not behind a custom domain.
 * The scheme is the one the front door (API Gateway, the local server) says in `X-Forwarded-Proto`,
 * which it sets itself whatever a client sent; anything but `http` reads as `https`.
 */
function restBaseUrl(event: APIGatewayProxyEvent): string {
  const context = event.requestContext;
  const host = context?.domainName ?? event.headers?.['Host'] ?? event.headers?.['host'] ?? 'localhost';
  const proto = schemeOf(event.headers?.['X-Forwarded-Proto'] ?? event.headers?.['x-forwarded-proto']);
  const stagePrefix = context?.stage && context.path?.startsWith(`/${context.stage}/`) ? `/${context.stage}` : '';
  return `${proto}://${host}${stagePrefix}`;
}

/** `http` only when the front door says so: the cloud's endpoints speak HTTPS alone. */
function schemeOf(forwardedProto: string | undefined): 'http' | 'https' {
  return forwardedProto === 'http' ? 'http' : 'https';
}
