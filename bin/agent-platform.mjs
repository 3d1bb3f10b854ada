#!/usr/bin/env node
// @ts-check
/**
 * The `agent-platform` command (package.json `bin`): runs the TypeScript CLI in this process under
 * tsx, so it needs no build step and signals (Ctrl-C on `logs --follow`) reach it directly.
 */
import { register } from 'tsx/esm/api';

register();
await import('./cli.ts');
