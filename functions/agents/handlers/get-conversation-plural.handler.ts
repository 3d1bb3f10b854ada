// GET /agent/{agentId}/conversations/{conversationId} is the SPEC's other spelling of the
// conversation path. Each path has its own route id (and handler module), so this re-exports it.
export { default } from './get-conversation.handler.ts';
