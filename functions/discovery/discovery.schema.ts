import * as z from 'zod';

// Responses (the `data` of each success), as the handlers answer them: the OpenAPI document's
// response schemas and the typed client's types.

/** Where each host of the platform lives (`PublicUrls`), where its API is described, and its version. */
export const discoveryResponse = z.object({
  baseUrl: z.string().describe('The API host'),
  streamUrl: z.string().describe('The host of streamed chat'),
  mcpUrl: z.string().describe('The host of hosted MCP servers'),
  voiceUrl: z.string().optional().describe('The host of voice sessions, when the platform runs one'),
  cdnUrl: z.string().optional().describe('The host of the embed widget and other static assets, when set'),
  siteUrl: z.string().optional().describe('The host of hosted websites, when the platform runs one'),
  siteUrlTemplate: z.string().optional().describe("Where one user's site is, `{alias}` standing for the alias; present with `siteUrl`"),
  codeUrl: z.string().optional().describe('The host of code servers, when set'),
  openApiUrl: z.string().describe('This OpenAPI document'),
  docsUrl: z.string().describe('The API reference for people'),
  version: z.string(),
});

export const healthResponse = z.object({ status: z.literal('ok'), version: z.string() });
