import type { Actor } from '../../functions/core/auth/actor.ts';
import { lineageOf, type Lineage } from '../../functions/core/http/lineage.ts';
import { createLogger, type Logger } from '../../functions/core/logger.ts';
import type { PublicUrls } from '../../functions/core/http/public-urls.ts';
import type { RequestScope } from '../../functions/core/request-scope.ts';

/** A request scope for calling a service directly: a live signal, a silent log and loopback URLs unless given. */
export function scopeOf(actor: Actor, options: { lineage?: Lineage; signal?: AbortSignal; log?: Logger; urls?: PublicUrls } = {}): RequestScope {
  const base = 'http://127.0.0.1:1';
  return {
    actor,
    lineage: options.lineage ?? lineageOf('req-1', undefined),
    log: options.log ?? createLogger('silent'),
    signal: options.signal ?? new AbortController().signal,
    urls: options.urls ?? { baseUrl: base, streamUrl: base, mcpUrl: base, voiceUrl: 'ws://127.0.0.1:1', cdnUrl: base, siteUrl: base, codeUrl: base },
  };
}
