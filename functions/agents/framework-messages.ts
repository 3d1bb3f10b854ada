/**
 * The agent's own message list (the framework's blocks: text, tool use, tool results...), kept
 * with a conversation so the next turn's agent sees what the last one did, not only what it said.
 * What the runtime reports is user code's output: it is checked and bounded here (and scrubbed by
 * the chat) before it is stored.
 */
import * as z from 'zod';
import type { FrameworkMessage } from '../runtimes/compute.ts';
import type { StoredMessage } from './conversation.schema.ts';

/**
 * Most bytes (as JSON) of the list kept for the next turn: what the model is sent again each turn,
 * so a generous context window's worth. Past it the oldest turns are dropped whole.
 */
export const MAX_FRAMEWORK_MESSAGES_BYTES = 1024 * 1024;

// Each block an object with any fields: a loose object rather than a record, which accepts the same
// JSON but is a zod type of its own that no other schema of the chat functions' bundles uses (4 KB).
const frameworkMessageList = z.array(
  z.object({
    role: z.enum(['user', 'assistant']),
    content: z.array(z.looseObject({})),
  }),
);

/** The runtime's `messages` event as the framework's list; null when it is not one (nothing is stored from it). */
export function frameworkMessagesFrom(raw: readonly unknown[]): FrameworkMessage[] | null {
  const parsed = frameworkMessageList.safeParse(raw);
  return parsed.success ? parsed.data : null;
}

/** The text view as the framework's list: what a conversation stored before the list was kept continues from. */
export function textAsFramework(messages: readonly StoredMessage[]): FrameworkMessage[] {
  return messages.map((m) => ({ role: m.role, content: [{ text: m.content }] }));
}

/** A user message that starts a turn: the prompt, not the tool results the framework sends back. */
function startsTurn(message: FrameworkMessage): boolean {
  return message.role === 'user' && !message.content.some((block) => 'toolResult' in block);
}

/**
 * What the run added to the list it was given: the messages after `sent` when the agent kept it as
 * given, else (its own history rules rewrote it, e.g. a sliding window) from the last message that
 * carries the prompt. Null when neither can be found.
 */
export function turnOf(after: readonly FrameworkMessage[], sent: readonly FrameworkMessage[], prompt: string): FrameworkMessage[] | null {
  const kept = after.length >= sent.length && sent.every((message, i) => JSON.stringify(message) === JSON.stringify(after[i]));
  if (kept) return after.slice(sent.length);
  for (let i = after.length - 1; i >= 0; i--) {
    const message = after[i]!;
    if (startsTurn(message) && message.content.some((block) => block['text'] === prompt)) return after.slice(i);
  }
  return null;
}

/**
 * `messages` within `maxBytes` of JSON: whole turns are dropped from the front (a tool result
 * never loses the tool use it answers, and the list still starts with a prompt). Null when even
 * the last turn alone is larger.
 */
export function boundFramework(messages: readonly FrameworkMessage[], maxBytes = MAX_FRAMEWORK_MESSAGES_BYTES): FrameworkMessage[] | null {
  const sizes = messages.map((message) => Buffer.byteLength(JSON.stringify(message)) + 1);
  let total = sizes.reduce((sum, size) => sum + size, 1);
  if (total <= maxBytes) return [...messages];
  for (let start = 1; start < messages.length; start++) {
    total -= sizes[start - 1]!;
    if (startsTurn(messages[start]!) && total <= maxBytes) return messages.slice(start);
  }
  return null;
}
