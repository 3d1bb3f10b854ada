import * as z from 'zod';
import { defineQueue } from '../../core/entry/queue.ts';
import { channelIdSchema } from '../channel.schema.ts';
import { deliverReply } from '../channel-reply.service.ts';

/** An acknowledged inbound message: the agent runs and its reply goes to the platform. */
export default defineQueue({
  payload: z.object({
    channelId: channelIdSchema,
    lineage: z.string().max(1024),
    baseUrl: z.string().max(2048),
    message: z.object({
      messageId: z.string().max(512),
      senderId: z.string().max(512),
      text: z.string().max(100_000),
      groupId: z.string().max(512).nullable(),
      mentioned: z.boolean(),
      conversationKey: z.string().max(1024),
      replyTo: z.record(z.string(), z.string().max(4096)),
    }),
  }),
  run: ({ ports, log, payload, signal }) => deliverReply(payload, ports, log, signal),
});
