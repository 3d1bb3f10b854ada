import { describe, expect, it } from 'vitest';
import { createLogger } from '../../functions/core/logger.ts';
import { prettyLogWriter } from '../../lib/local/pretty-log.ts';

describe('the terminal log format', () => {
  it('renders request lines compactly and keeps other fields, still redacted', () => {
    // Prepare
    const out: string[] = [];
    const log = createLogger(
      'info',
      { stage: 'local' },
      prettyLogWriter((t) => out.push(t)),
    );
    // Act
    log
      .child({ requestId: 'r-1', rootRequestId: 'r-1', route: 'users.get-user-info' })
      .info('request', { method: 'GET', path: '/user/info', status: 200, durationMs: 3, userId: 'u-1' });
    log.warn('token credits not covered', { apiKey: 'sk-secret', extra: 0.5 });
    // Assess
    expect(out[0]).toMatch(/^\d\d:\d\d:\d\d info {2}GET \/user\/info 200 3ms userId=u-1\n$/);
    expect(out[1]).toMatch(/warn {2}token credits not covered apiKey=\[REDACTED\] extra=0\.5\n$/);
  });

  it('passes through a line that is not JSON', () => {
    const out: string[] = [];
    prettyLogWriter((t) => out.push(t))('plain text');
    expect(out).toEqual(['plain text\n']);
  });
});
