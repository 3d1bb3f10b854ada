/**
 * A vitest reporter that says, once a minute, how far the run is: files done out of all, tests
 * passed and failed so far, the time, and the files still running (the long ones are what a
 * silent log is waiting for). `npm test` adds it beside the default reporter when its output is
 * not a terminal (a terminal has vitest's own live summary), so a CI log gets about one line a
 * minute, not one a test.
 */
import type { Reporter, TestModule, TestSpecification, Vitest } from 'vitest/node';

const EVERY_MS = Number(process.env['TEST_PROGRESS_SECONDS'] ?? 60) * 1000;

export default class ProgressReporter implements Reporter {
  private ctx: Vitest | undefined;
  private started = 0;
  private files = 0;
  private done = 0;
  private passed = 0;
  private failed = 0;
  private readonly running = new Set<string>();
  private timer: NodeJS.Timeout | undefined;

  onInit(ctx: Vitest): void {
    this.ctx = ctx;
  }

  onTestRunStart(specifications: readonly TestSpecification[]): void {
    this.started = Date.now();
    this.files = specifications.length;
    this.timer = setInterval(() => this.report(), EVERY_MS);
    this.timer.unref();
  }

  onTestModuleStart(module: TestModule): void {
    this.running.add(module.relativeModuleId);
  }

  onTestModuleEnd(module: TestModule): void {
    this.running.delete(module.relativeModuleId);
    this.done += 1;
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') this.passed += 1;
      else if (state === 'failed') this.failed += 1;
    }
  }

  onTestRunEnd(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
  }

  private report(): void {
    const seconds = Math.round((Date.now() - this.started) / 1000);
    const elapsed = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, '0')}`;
    const running = [...this.running];
    const shown = running.slice(0, 3).join(', ') + (running.length > 3 ? `, +${running.length - 3} more` : '');
    this.ctx?.logger.log(
      `[${elapsed}] ${this.done}/${this.files} files done, ${this.passed} tests passed, ${this.failed} failed${running.length > 0 ? `; running ${shown}` : ''}`,
    );
  }
}
