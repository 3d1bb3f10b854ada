import { defineArea } from '../../lib/manifest/define.ts';
import { VIEWER_FILES } from './docs-viewer.ts';

/**
 * The API reference: the OpenAPI document and the page that renders it. Public and needing no
 * store. An area of its own, not discovery's, because its function bundles every handler module
 * (for their schemas) and the viewer: health and discovery keep a small, quick-starting function.
 */
export const referenceArea = defineArea({
  name: 'reference',
  routes: [
    { method: 'GET', path: '/openapi.json', handler: 'get-openapi', auth: 'public', callers: 'role' },
    { method: 'GET', path: '/docs', handler: 'get-docs', auth: 'public', callers: 'role' },
    { method: 'GET', path: '/docs/{asset}', handler: 'get-docs-asset', auth: 'public', callers: 'role' },
  ],
  runtimeFiles: VIEWER_FILES,
});
