/**
 * Vitest global setup of the infra tests (vitest.config.ts): the key of the platform's sources as
 * the run starts, before any test process has loaded them. A test process whose key differs when
 * it synthesizes saw an edit made during the run, and neither reads nor fills the shared synth
 * cache (test/infra/synth-platform.ts).
 */
import type { TestProject } from 'vitest/node';
import { platformSynthKey } from './synth-cache.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    platformSynthKey: string;
  }
}

export default function setup(project: TestProject): void {
  project.provide('platformSynthKey', platformSynthKey());
}
