import { defineRoute } from '../../core/http/route.ts';
import { embedChatBody, embedChatResponse } from '../embed.schema.ts';
import { startEmbedChat } from '../embed.service.ts';
import { pageOrigin } from '../origin.ts';

export default defineRoute({
  response: embedChatResponse,
  body: embedChatBody,
  run: ({ body, request, ports, urls }) =>
    startEmbedChat(
      body.token,
      { origin: pageOrigin(request.headers, urls.baseUrl), ip: request.sourceIp, visitorToken: body.visitorToken },
      ports,
      urls,
      ports.config.EMBED_SESSION_TTL_SEC,
    ),
});
