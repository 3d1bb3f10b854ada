import type { PageProps } from '../app.tsx';
import { AgentChat } from './agents/chat.tsx';
import { AgentConversations } from './agents/conversations.tsx';
import { AgentEditor } from './agents/editor.tsx';
import { AgentList } from './agents/list.tsx';
import { AgentFrame } from './agents/shared.tsx';
import { VoiceCall } from './agents/voice-call.tsx';

/**
 * The agents pages: `#/agents` (list), `#/agents/new`, `#/agents/<id>` (edit),
 * `#/agents/<id>/chat` (streamed chat, or the push-to-talk test call of a voice agent) and
 * `#/agents/<id>/conversations[/<conversationId>]`.
 */
export default function Agents({ route }: PageProps) {
  const [, id, tab, conversationId] = route.segments;
  if (id === undefined) return <AgentList />;
  if (id === 'new') return <AgentEditor agent={null} />;
  if (tab === 'chat')
    return (
      <AgentFrame agentId={id} tab="chat">
        {(agent) =>
          agent.agentType === 'bidi' ? <VoiceCall agent={agent} /> : <AgentChat agent={agent} continueId={route.query.get('conversation') ?? undefined} />
        }
      </AgentFrame>
    );
  if (tab === 'conversations')
    return (
      <AgentFrame agentId={id} tab="conversations">
        {(agent) => <AgentConversations agent={agent} conversationId={conversationId} />}
      </AgentFrame>
    );
  return (
    <AgentFrame agentId={id} tab="edit">
      {(agent, reload) => <AgentEditor agent={agent} onSaved={reload} />}
    </AgentFrame>
  );
}
