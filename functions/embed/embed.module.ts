import * as z from 'zod';
import { defineArea, providePort } from '../../lib/manifest/define.ts';
import { WIDGET_VERSION } from '../../widget/version.ts';
import { createEmbedStore } from './embed.store.ts';

/**
 * Embed tokens and the widget (SPEC 4.10): publishable, domain-restricted keys a site puts in a
 * script tag; `POST /embed/chat` trades one for a short-lived credential that can chat with (and
 * call) only the embed's agents, billed to the owner. The widget script itself is a static file on
 * the CDN host (widget/; served by the local platform, S3 behind CloudFront in the cloud).
 */
export const embedArea = defineArea({
  name: 'embed',
  routes: [
    { method: 'POST', path: '/embed/create', handler: 'create-embed', auth: 'required' },
    { method: 'GET', path: '/embed/list', handler: 'list-embeds', auth: 'required' },
    { method: 'PUT', path: '/embed/{embedTokenId}', handler: 'update-embed', auth: 'required' },
    { method: 'DELETE', path: '/embed/{embedTokenId}', handler: 'delete-embed', auth: 'required' },
    // Public: the embed token (query or body) and the page's Origin are the credentials.
    { method: 'GET', path: '/embed/config', handler: 'get-embed-config', auth: 'public', callers: 'role' },
    { method: 'POST', path: '/embed/chat', handler: 'start-embed-chat', auth: 'public', callers: 'role' },
  ],
  tables: [
    // Keyed by id (the run tokens carry it, and every chat re-reads it); `byDigest` finds a presented token.
    {
      name: 'embed-tokens',
      partitionKey: 'embedTokenId',
      numberKeys: ['createdAt'],
      indexes: [
        { name: 'byOwner', partitionKey: 'ownerId', sortKey: 'createdAt' },
        { name: 'byDigest', partitionKey: 'digest' },
      ],
    },
  ],
  provides: {
    embeds: providePort({ tables: ['embed-tokens'] }, ({ db }) => createEmbedStore(db)),
  },
  uses: ['agents'],
  // The widget script (SPEC 4.10): {cdn_url}/widget.js and {cdn_url}/v{version}/widget.js.
  assets: [{ host: 'cdn', entry: 'widget/widget.ts', name: 'widget.js', version: WIDGET_VERSION }],
  settings: {
    EMBED_SESSION_TTL_SEC: z.coerce
      .number()
      .int()
      .min(60)
      .max(86_400)
      .default(3600)
      .describe("How long a widget visitor's credential from `POST /embed/chat` lasts, in seconds; the widget asks again after"),
  },
});
