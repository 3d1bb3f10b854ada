/**
 * For a person at a terminal: `12:01:02 info  GET /user/info 200 3ms user=...` instead of a JSON
 * line. The records are the same (already redacted); only the rendering differs. Pipes and files
 * keep JSON lines, which tools parse.
 */
export function prettyLogWriter(write: (text: string) => void = (text) => process.stdout.write(text)): (line: string) => void {
  return (line) => {
    let record: Record<string, unknown>;
    try {
      record = JSON.parse(line) as Record<string, unknown>;
    } catch {
      write(line + '\n');
      return;
    }
    const { level, time, message, stage: _stage, requestId, rootRequestId: _root, route: _route, method, path, status, durationMs, ...rest } = record;
    const clock = typeof time === 'string' ? time.slice(11, 19) : '';
    const head = message === 'request' ? `${String(method)} ${String(path)} ${String(status)} ${String(durationMs)}ms` : String(message);
    const fields = Object.entries(rest)
      .filter(([, v]) => v !== null && v !== undefined)
      .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
    if (requestId && message !== 'request') fields.push(`requestId=${String(requestId)}`);
    write(`${clock} ${String(level).padEnd(5)} ${head}${fields.length ? ' ' + fields.join(' ') : ''}\n`);
  };
}
