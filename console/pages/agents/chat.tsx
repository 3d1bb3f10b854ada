import { useEffect, useRef, useState } from 'preact/hooks';
import { MarkerParser } from '../../../widget/markers.ts';
import { dataOf, PlatformApiError, useApi, useLoad } from '../../api.ts';
import { href, navigate } from '../../router.ts';
import { Button, Form, TextArea } from '../../ui/form.tsx';
import { Section } from '../../ui/page.tsx';
import { ErrorNote, Loading } from '../../ui/status.tsx';
import type { Agent } from './shared.tsx';

/** One line of the chat as shown: a turn of either side, a tool the agent used, or an error. */
type Entry =
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; streaming: boolean }
  | { kind: 'tool'; name: string; done: boolean }
  | { kind: 'error'; text: string };

/** The answer of a chat request that failed before its stream began, as the API's error. */
async function failureOf(response: Response): Promise<Error> {
  const body = (await response.json().catch(() => null)) as { error?: { code?: string; message?: string } | string; requestId?: string } | null;
  const error = body?.error;
  const code = typeof error === 'object' && error !== null ? (error.code ?? 'ERROR') : 'ERROR';
  const message = typeof error === 'object' && error !== null ? (error.message ?? response.statusText) : (error ?? response.statusText);
  return new PlatformApiError(response.status, code, message, response.headers.get('x-request-id') ?? body?.requestId);
}

/**
 * `#/agents/<id>/chat`: the reply streamed from the stream host (SPEC 4.1, its markers read by the
 * embed widget's parser), each tool shown as the agent starts it, the conversation continued until
 * "New conversation"; `?conversation=<id>` continues a stored one.
 */
export function AgentChat(props: { agent: Agent; continueId?: string | undefined }) {
  const api = useApi();
  const { agent } = props;
  const [entries, setEntries] = useState<Entry[]>([]);
  const [conversationId, setConversationId] = useState<string | undefined>(props.continueId);
  const [prompt, setPrompt] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [runId, setRunId] = useState<string | null>(null);
  const abort = useRef<AbortController | null>(null);
  const log = useRef<HTMLDivElement>(null);

  // A stored conversation to continue: its messages first.
  const earlier = useLoad(
    (api) =>
      props.continueId === undefined
        ? Promise.resolve(null)
        : dataOf(
            api.client.GET('/agent/{agentId}/conversation/{conversationId}', {
              params: { path: { agentId: agent.agentId, conversationId: props.continueId } },
            }),
          ),
    [agent.agentId, props.continueId],
  );
  useEffect(() => {
    setConversationId(props.continueId);
    setEntries(
      earlier.data?.conversation.messages.map((m): Entry =>
        m.role === 'user' ? { kind: 'user', text: m.content } : { kind: 'assistant', text: m.content, streaming: false },
      ) ?? [],
    );
  }, [earlier.data, props.continueId]);
  useEffect(() => () => abort.current?.abort(), []);
  useEffect(() => {
    if (log.current) log.current.scrollTop = log.current.scrollHeight;
  }, [entries]);

  /** Changes the entry being streamed (the last assistant one). */
  const update = (change: (entries: Entry[]) => Entry[]) => setEntries((current) => change([...current]));

  const send = async () => {
    const text = prompt.trim();
    if (text === '' || busy) return;
    setPrompt('');
    setError(undefined);
    setRunId(null);
    setBusy(true);
    update((list) => [...list, { kind: 'user', text }]);
    const controller = new AbortController();
    abort.current = controller;
    try {
      const response = await api.fetchAuthed(`${api.hosts.streamUrl}/agent/${encodeURIComponent(agent.agentId)}/chat`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: text, ...(conversationId === undefined ? {} : { conversationId }) }),
        signal: controller.signal,
      });
      if (!response.ok || response.body === null) throw await failureOf(response);
      setRunId(response.headers.get('x-request-id'));
      const fromHeader = response.headers.get('x-conversation-id');
      if (fromHeader) setConversationId(fromHeader);
      const parser = new MarkerParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        const parts = done ? parser.end() : parser.push(value);
        if (parts.length > 0)
          update((list) => {
            for (const part of parts) {
              const last = list.at(-1);
              if (part.kind === 'meta') {
                if (part.conversationId) setConversationId(part.conversationId);
              } else if (part.kind === 'text') {
                if (last?.kind === 'assistant' && last.streaming) list[list.length - 1] = { ...last, text: last.text + part.text };
                else {
                  if (last?.kind === 'tool') list[list.length - 1] = { ...last, done: true };
                  list.push({ kind: 'assistant', text: part.text, streaming: true });
                }
              } else if (part.kind === 'tool') {
                if (last?.kind === 'tool') list[list.length - 1] = { ...last, done: true };
                if (last?.kind === 'assistant') list[list.length - 1] = { ...last, streaming: false };
                list.push({ kind: 'tool', name: part.name, done: false });
              } else list.push({ kind: 'error', text: part.message });
            }
            return list;
          });
        if (done) break;
      }
    } catch (e) {
      if (!controller.signal.aborted) setError(e);
    } finally {
      update((list) =>
        list.map((entry) => (entry.kind === 'assistant' ? { ...entry, streaming: false } : entry.kind === 'tool' ? { ...entry, done: true } : entry)),
      );
      setBusy(false);
      abort.current = null;
    }
  };

  const startOver = () => {
    abort.current?.abort();
    setEntries([]);
    setConversationId(undefined);
    setError(undefined);
    setRunId(null);
    if (props.continueId !== undefined) navigate('agents', agent.agentId, 'chat');
  };

  return (
    <Section
      title="Chat"
      actions={
        <Button onClick={startOver} disabled={entries.length === 0 && conversationId === undefined}>
          New conversation
        </Button>
      }
    >
      <p class="muted agent-chat-meta">
        {conversationId === undefined ? (
          'A new conversation starts with your first message.'
        ) : (
          <>
            Conversation{' '}
            <a href={href('agents', agent.agentId, 'conversations', conversationId)}>
              <code>{conversationId}</code>
            </a>
          </>
        )}
        {runId === null || busy ? null : (
          <>
            {' · '}
            <a href={href('logs', runId)}>This run in the logs</a>
          </>
        )}
      </p>
      {earlier.loading && props.continueId !== undefined ? <Loading what="the conversation" /> : null}
      <ErrorNote error={earlier.error} />
      <div class="agent-chat-log" role="log" aria-label="Messages" aria-live="polite" aria-busy={busy} ref={log} tabIndex={0}>
        {entries.length === 0 ? <p class="muted">No messages yet.</p> : null}
        {entries.map((entry, i) => (
          <ChatEntry entry={entry} key={i} />
        ))}
      </div>
      <ErrorNote error={error} />
      <Form label="Send a message" class="form agent-chat-form" onSubmit={send}>
        <TextArea label="Message" rows={3} value={prompt} onValue={setPrompt} placeholder={`Message ${agent.agentName}`} />
        <div class="agent-editor-actions">
          <Button type="submit" variant="primary" busy={busy} disabled={prompt.trim() === ''}>
            Send
          </Button>
          {busy ? (
            <Button onClick={() => abort.current?.abort()} variant="secondary">
              Stop
            </Button>
          ) : null}
        </div>
      </Form>
    </Section>
  );
}

function ChatEntry({ entry }: { entry: Entry }) {
  if (entry.kind === 'tool')
    return (
      <div class="agent-msg agent-msg-tool">
        <span class="agent-msg-who">Tool</span> <code>{entry.name}</code> {entry.done ? 'used' : 'running…'}
      </div>
    );
  if (entry.kind === 'error')
    return (
      <div class="agent-msg agent-msg-error">
        <span class="agent-msg-who">Error</span> {entry.text}
      </div>
    );
  return (
    <div class={`agent-msg agent-msg-${entry.kind}`} aria-busy={entry.kind === 'assistant' && entry.streaming ? true : undefined}>
      <span class="agent-msg-who">{entry.kind === 'user' ? 'You' : 'Agent'}</span>
      <p class="agent-msg-text">{entry.text}</p>
    </div>
  );
}
