import * as z from 'zod';
import type { KernelPorts } from '../ports.ts';
import { defineArea, providePort, KIB } from '../../lib/manifest/define.ts';
import { SEARCH_LIBRARY_FILES } from '../search/partition-index.ts';
import { createBucketObjects, type BucketObjects } from '../core/files/bucket-objects.ts';
import { createKnowledgeStore, type KnowledgeStore } from './knowledge.store.ts';
import { textReaderFor, textReadingSettings, type TextReader } from './text-reader.ts';

/**
 * What a 5 MB file needs as JSON: base64 makes it 4/3 larger (6.7 MB), and the rest of the body
 * is a few names. API Gateway's 10 MB is the bound above it.
 */
const UPLOAD_BODY_BYTES = 7 * 1024 * KIB;

/**
 * pdf.js through `unpdf`, loaded at run time by extract-text.ts rather than bundled (it is about
 * 1.7 MB, the bundles' budget 200 KB): copied beside the bundles of this area's functions, where
 * Node finds it as it finds it in the repository's node_modules locally.
 */
const PDF_ENGINE_FILES = ['package.json', 'LICENSE', 'dist/index.mjs', 'dist/pdfjs.mjs'].map((file) => `node_modules/unpdf/${file}`);

/**
 * The worker thread files are read and chunked in (text-reader.ts): a TypeScript runtime file is a
 * worker entry, which the builds bundle as `workers/text-worker.mjs` beside the bundle.
 */
const TEXT_WORKER_FILES = ['functions/knowledge/text-worker.ts'];

/** Per-user file storage with indexing and search (SPEC 4.6). */
export const knowledgeArea = defineArea({
  name: 'knowledge',
  routes: [
    { method: 'POST', path: '/knowledge/upload', handler: 'upload-file', auth: 'required', maxBodyBytes: UPLOAD_BODY_BYTES },
    { method: 'POST', path: '/knowledge/upload-url', handler: 'create-upload-url', auth: 'required' },
    // Reading: role tokens (an agent's run) may fetch and search the owner's files, not change them.
    { method: 'POST', path: '/knowledge/download-url', handler: 'get-download-url', auth: 'required', callers: 'role' },
    { method: 'GET', path: '/knowledge/list', handler: 'list-files', auth: 'required', callers: 'role' },
    // SPEC 4.6 says ANY: every method with a body reads the key from it, GET from the query.
    { method: 'POST', path: '/knowledge/delete', handler: 'delete-file', auth: 'required' },
    { method: 'DELETE', path: '/knowledge/delete', handler: 'delete-file', auth: 'required' },
    { method: 'PUT', path: '/knowledge/delete', handler: 'delete-file', auth: 'required' },
    { method: 'PATCH', path: '/knowledge/delete', handler: 'delete-file', auth: 'required' },
    { method: 'GET', path: '/knowledge/delete', handler: 'delete-file-by-query', auth: 'required' },
    { method: 'POST', path: '/knowledge/create-folder', handler: 'create-folder', auth: 'required' },
    { method: 'POST', path: '/knowledge/delete-folder', handler: 'delete-folder', auth: 'required' },
    { method: 'POST', path: '/knowledge/search', handler: 'search-files', auth: 'required', callers: 'role' },
  ],
  entryPoints: [
    // Presigned uploads land under `incoming/`; this moves each to its key, within the quota, and indexes it.
    { kind: 'storageEvent', handler: 'index-upload', bucket: 'knowledge', prefix: 'incoming/', timeoutSec: 120 },
  ],
  tables: [
    // Files and folders by owner; the sort key makes each folder's children one range (knowledge.store.ts).
    { name: 'knowledge-files', partitionKey: 'userId', sortKey: 'entry' },
    // One counter per owner: the bytes their files take, reserved before each write.
    { name: 'knowledge-usage', partitionKey: 'userId' },
  ],
  buckets: [{ name: 'knowledge', purpose: "users' knowledge files (users/), and presigned uploads on their way in (incoming/)", browserUploads: true }],
  provides: {
    knowledgeStore: providePort<KnowledgeStore>({ tables: ['knowledge-files', 'knowledge-usage'] }, ({ db }) => createKnowledgeStore(db)),
    knowledgeObjects: providePort<BucketObjects>({ buckets: ['knowledge'] }, (kernel: KernelPorts): BucketObjects =>
      createBucketObjects(kernel.config, 'knowledge'),
    ),
    // One per platform (or Lambda container): its worker threads are started on the first file that needs one.
    knowledgeText: providePort<TextReader>({}, (kernel: KernelPorts): TextReader => textReaderFor(kernel.config)),
  },
  uses: ['searchIndex'],
  settings: {
    KNOWLEDGE_QUOTA_MB: z.coerce.number().min(0).max(1_000_000).default(100).describe("Storage each account's knowledge files may take, in MiB"),
    // Direct uploads stay at SPEC's 5 MB.
    KNOWLEDGE_UPLOAD_URL_MAX_MB: z.coerce
      .number()
      .min(0)
      .max(5000)
      .default(50)
      .describe('Largest file a knowledge upload URL accepts, in MiB; direct uploads stay at 5 MB'),
    ...textReadingSettings,
  },
  // The search libraries too: this area queries (partition-index.ts).
  runtimeFiles: [...PDF_ENGINE_FILES, ...SEARCH_LIBRARY_FILES, ...TEXT_WORKER_FILES],
});
