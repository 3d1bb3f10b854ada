import { dataOf, useLoad } from '../../api.ts';
import { href } from '../../router.ts';
import { Section } from '../../ui/page.tsx';
import { Empty, ErrorNote, Loading, When } from '../../ui/status.tsx';
import { DataTable } from '../../ui/table.tsx';
import type { Agent } from './shared.tsx';

/** `#/agents/<id>/conversations[/<conversationId>]`: the agent's conversations, and one's messages. */
export function AgentConversations(props: { agent: Agent; conversationId: string | undefined }) {
  const { agent } = props;
  const list = useLoad(
    (api) => dataOf(api.client.GET('/agent/{agentId}/conversations', { params: { path: { agentId: agent.agentId }, query: { limit: 100 } } })),
    [agent.agentId],
  );
  return (
    <>
      <Section title="Conversations">
        <p class="muted">Your conversations with this agent, most recent first (up to 100).</p>
        <ErrorNote error={list.error} />
        {list.loading && list.data === undefined ? <Loading what="conversations" /> : null}
        <DataTable
          caption="Conversations"
          rows={list.data?.conversations}
          rowKey={(c) => c.conversationId}
          empty={
            <>
              No conversations yet. <a href={href('agents', agent.agentId, 'chat')}>Start one</a>.
            </>
          }
          columns={[
            {
              header: 'Title',
              cell: (c) => (
                <a
                  href={href('agents', agent.agentId, 'conversations', c.conversationId)}
                  aria-current={c.conversationId === props.conversationId ? 'true' : undefined}
                >
                  {c.title || 'Untitled'}
                </a>
              ),
            },
            { header: 'Messages', cell: (c) => c.messageCount.toLocaleString() },
            { header: 'Last message', cell: (c) => <When at={c.updatedAt} />, wide: true },
            { header: 'Started', cell: (c) => <When at={c.createdAt} />, wide: true },
          ]}
        />
      </Section>
      {props.conversationId === undefined ? null : <Conversation agent={agent} conversationId={props.conversationId} />}
    </>
  );
}

function Conversation(props: { agent: Agent; conversationId: string }) {
  const conversation = useLoad(
    (api) =>
      dataOf(
        api.client.GET('/agent/{agentId}/conversation/{conversationId}', {
          params: { path: { agentId: props.agent.agentId, conversationId: props.conversationId } },
        }),
      ),
    [props.agent.agentId, props.conversationId],
  );
  const data = conversation.data?.conversation;
  return (
    <Section
      title={data === undefined ? 'Conversation' : `Conversation: ${data.title || 'Untitled'}`}
      id="section-conversation"
      actions={
        props.agent.agentType === 'bidi' ? null : (
          <a
            class="button button-secondary agent-button-link"
            href={`${href('agents', props.agent.agentId, 'chat')}?conversation=${encodeURIComponent(props.conversationId)}`}
          >
            Continue in chat
          </a>
        )
      }
    >
      <ErrorNote error={conversation.error} />
      {data === undefined ? (
        conversation.error === undefined ? (
          <Loading what="the conversation" />
        ) : null
      ) : data.messages.length === 0 ? (
        <Empty>No messages.</Empty>
      ) : (
        <ol class="agent-chat-log agent-transcript" aria-label="Messages" tabIndex={0}>
          {data.messages.map((m, i) => (
            <li class={`agent-msg agent-msg-${m.role}`} key={i}>
              <span class="agent-msg-who">{m.role === 'user' ? 'You' : 'Agent'}</span> <When at={m.timestamp} />
              <p class="agent-msg-text">{m.content}</p>
            </li>
          ))}
        </ol>
      )}
    </Section>
  );
}
