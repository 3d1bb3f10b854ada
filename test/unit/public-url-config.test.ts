/**
 * PUBLIC_URL and the host URL settings as the configuration parses them, how the platform's public
 * URLs follow a trusted proxy's forwarded origin, and which origin the local front door reads from
 * a request's headers.
 */
import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../functions/core/config.ts';
import { publicUrls } from '../../functions/core/http/public-urls.ts';
import { requestOrigin } from '../../lib/local/forwarded.ts';

const BASE = { TABLE_PREFIX: 't-', BUCKET_PREFIX: 'b-' };

/** The configuration the local platform makes on 127.0.0.1:8787 (lib/local/platform.ts), with `env`. */
const localConfig = (env: Record<string, string>) =>
  parseConfig(
    {
      ...BASE,
      LOCAL_ORIGIN: 'http://127.0.0.1:8787',
      BASE_URL: 'http://127.0.0.1:8787',
      STREAM_URL: 'http://127.0.0.1:8787/stream',
      MCP_URL: 'http://127.0.0.1:8787',
      VOICE_URL: 'ws://127.0.0.1:8787/voice',
      CDN_URL: 'http://127.0.0.1:8787/cdn',
      SITE_URL: 'http://localhost:8788',
      ...env,
    },
    [],
  );

const headers = (values: Record<string, string>) => ({ headers: { host: '127.0.0.1:8787', ...values } }) as unknown as IncomingMessage;

describe('PUBLIC_URL', () => {
  it.each([
    ['https://abc.trycloudflare.com', 'https://abc.trycloudflare.com'],
    ['https://abc.trycloudflare.com/', 'https://abc.trycloudflare.com'],
    ['http://Example.TEST:8080//', 'http://example.test:8080'],
    ['https://proxy.example.test/platform/', 'https://proxy.example.test/platform'],
  ])('takes %s as %s', (given, parsed) => {
    // Act
    const config = parseConfig({ ...BASE, PUBLIC_URL: given }, []);

    // Assess
    expect(config.PUBLIC_URL).toBe(parsed);
  });

  it.each([
    'abc.trycloudflare.com',
    'ftp://abc.example.test',
    'https://abc.example.test/?x=1',
    'https://abc.example.test/#top',
    'https://abc.example.test?',
    'https://u:p@abc.example.test',
  ])('refuses %s at start, naming the setting', (given) => {
    // Act
    const parse = () => parseConfig({ ...BASE, PUBLIC_URL: given }, []);

    // Assess
    expect(parse).toThrow(ConfigError);
    expect(parse).toThrow(/PUBLIC_URL/);
  });

  it('takes a voice host as ws(s) or http(s), and only that', () => {
    // Act
    const voice = parseConfig({ ...BASE, VOICE_URL: 'wss://voice.example.test/' }, []);
    const wrong = () => parseConfig({ ...BASE, STREAM_URL: 'wss://stream.example.test' }, []);

    // Assess
    expect(voice.VOICE_URL).toBe('wss://voice.example.test');
    expect(wrong).toThrow(/STREAM_URL/);
  });
});

describe('public URLs behind a proxy', () => {
  it('ignore the request when forwarded headers are not trusted', () => {
    // Act
    const urls = publicUrls(localConfig({}), 'https://forged.example.test');

    // Assess
    expect(urls).toMatchObject({ baseUrl: 'http://127.0.0.1:8787', voiceUrl: 'ws://127.0.0.1:8787/voice' });
  });

  it("move every host on the local origin to a trusted request's origin, and leave the others", () => {
    // Prepare
    const config = localConfig({ TRUST_FORWARDED_HEADERS: 'true', CDN_URL: 'https://cdn.example.test' });

    // Act
    const urls = publicUrls(config, 'https://tunnel.example.test');

    // Assess
    expect(urls).toEqual({
      baseUrl: 'https://tunnel.example.test',
      streamUrl: 'https://tunnel.example.test/stream',
      mcpUrl: 'https://tunnel.example.test',
      voiceUrl: 'wss://tunnel.example.test/voice',
      cdnUrl: 'https://cdn.example.test',
      siteUrl: 'http://localhost:8788',
      siteUrlTemplate: 'http://localhost:8788/{alias}/',
    });
  });

  it('keep PUBLIC_URL when it is set, trusted headers or not', () => {
    // Prepare
    const config = localConfig({ TRUST_FORWARDED_HEADERS: 'true', PUBLIC_URL: 'https://fixed.example.test', BASE_URL: 'https://fixed.example.test' });

    // Act
    const urls = publicUrls(config, 'https://tunnel.example.test');

    // Assess: every host stays as configured (the platform derives them from PUBLIC_URL).
    expect(urls.baseUrl).toBe('https://fixed.example.test');
    expect(urls.streamUrl).toBe('http://127.0.0.1:8787/stream');
  });
});

describe("a request's origin at the local front door", () => {
  const forwarded = { 'x-forwarded-host': 'tunnel.example.test', 'x-forwarded-proto': 'https' };

  it('is the local server, plain HTTP, unless the operator trusts forwarded headers', () => {
    // Act
    const untrusted = requestOrigin(headers({ ...forwarded, forwarded: 'host=other.example.test;proto=https' }), false);

    // Assess
    expect(untrusted).toEqual({ proto: 'http', host: '127.0.0.1:8787' });
  });

  it.each([
    ['X-Forwarded-*', forwarded, { proto: 'https', host: 'tunnel.example.test' }],
    [
      'a chain, its first entry',
      { 'x-forwarded-host': 'a.example.test, b.example.test', 'x-forwarded-proto': 'https, http' },
      { proto: 'https', host: 'a.example.test' },
    ],
    [
      'Forwarded, before X-Forwarded-*',
      { ...forwarded, forwarded: 'for=192.0.2.1;host="fwd.example.test:8443";proto=https, for=10.0.0.1' },
      { proto: 'https', host: 'fwd.example.test:8443' },
    ],
    ['the Host header alone', {}, { proto: 'http', host: '127.0.0.1:8787' }],
    [
      'no host or scheme that is not one',
      { 'x-forwarded-host': 'evil.test/path', 'x-forwarded-proto': 'javascript' },
      { proto: 'http', host: '127.0.0.1:8787' },
    ],
  ])('reads %s when trusted', (_case, values, expected) => {
    // Act
    const origin = requestOrigin(headers(values), true);

    // Assess
    expect(origin).toEqual(expected);
  });
});
