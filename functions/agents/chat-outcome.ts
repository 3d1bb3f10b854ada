/** What a buffered read of a chat's event stream comes to: the agent's text, or its error. */
export type ChatOutcome = { readonly ok: true; readonly response: string } | { readonly ok: false; readonly error: string };

/**
 * The refusal message of a chat answered with an error status (envelope A: `{success: false,
 * error: {code, message}}`), for the platform's own callers of the chat endpoint (cron, channels).
 */
export function errorMessageOf(body: string): string | null {
  try {
    const parsed = JSON.parse(body) as { error?: { message?: unknown } | string };
    if (typeof parsed.error === 'string') return parsed.error;
    return typeof parsed.error?.message === 'string' ? parsed.error.message : null;
  } catch {
    return null;
  }
}

/** The agent's text, or its error, from the chat's Server-Sent Events (functions/agents/chat.stream.ts). */
export function outcomeOfEvents(body: string): ChatOutcome {
  let text = '';
  for (const block of body.split(/\r?\n\r?\n/)) {
    let event = 'message';
    const data: string[] = [];
    for (const line of block.split(/\r?\n/)) {
      if (line.startsWith('event:')) event = line.slice(6).trim();
      else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
    }
    if (data.length === 0) continue;
    const value = JSON.parse(data.join('\n')) as { text?: string; message?: string; code?: string };
    if (event === 'text') text += value.text ?? '';
    if (event === 'error') return { ok: false, error: value.message ?? value.code ?? 'The agent run failed.' };
  }
  return { ok: true, response: text };
}
