import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

/** The runtime's plain-Python echo agent: the Strands interface without the framework. */
const ECHO_AGENT = readFileSync(new URL('../../python-runtime/tests/fixtures/echo_agent.py', import.meta.url), 'utf8');
const ECHO_ACTION = `def handler(event, context):
    return {"statusCode": 200, "body": {"ok": True}}
`;
const MISSING_PYTHON = '/nonexistent/bin/python3.11';

/** The preflight logs in the background: waits for its line (JSON log lines). */
async function preflightLine(logLines: readonly string[]): Promise<{ level: string; message: string }> {
  for (let waited = 0; waited < 15_000; waited += 50) {
    for (const line of logLines) {
      const entry = JSON.parse(line) as { level: string; message: string };
      if (entry.message.startsWith('Python runtime')) return entry;
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no preflight line in:\n${logLines.join('\n')}`);
}

describe('Python preflight', () => {
  it('names the interpreter, its version and whether the agent framework is installed', async () => {
    // Prepare: what the machine's python3 says about itself.
    const [executable, version] = execFileSync('python3', ['-I', '-c', 'import sys; print(sys.executable); print("%d.%d.%d" % sys.version_info[:3])'], {
      encoding: 'utf8',
    })
      .trim()
      .split('\n');
    const logLines: string[] = [];
    // Act
    const platform = await startTestPlatform({ logLines });
    try {
      const line = await preflightLine(logLines);
      // Assess: strands is not installed on this machine (no PyPI), so the line says how to install it.
      expect(line.level).toBe('info');
      expect(line.message).toBe(
        `Python runtime: ${executable} (Python ${version}); agent framework (strands) not installed: actions run, agents that import it fail until ${executable} -m pip install -r layers/python/requirements.txt (or npm run setup:python)`,
      );
    } finally {
      await platform.stop({ removeData: true });
    }
  });

  describe('without a usable interpreter', () => {
    let platform: TestPlatform;
    const logLines: string[] = [];
    let owner: { userId: string; token: string };
    let actionId: string;
    let agentId: string;
    const credits = async (): Promise<number> => (await platform.api('GET', '/user/credits', { token: owner.token })).body.data.credits;

    beforeAll(async () => {
      // The action and agent are created while Python is there (creating checks the source with
      // it), then the platform restarts on the same data without it, as after an uninstall.
      const before = await startTestPlatform();
      owner = await createUser(before, { alias: 'preflight-owner', credits: 100 });
      const action = await before.api('POST', '/action/create', {
        token: owner.token,
        body: { actionName: 'Ok', description: 'answers ok', runtime: 'python3.12', sourceCode: ECHO_ACTION, category: 'testing' },
      });
      const agent = await before.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'echo', description: 'echoes', sourceCode: ECHO_AGENT },
      });
      if (action.status !== 200 || agent.status !== 200) throw new Error(`create: ${action.text} ${agent.text}`);
      actionId = action.body.data.actionId;
      agentId = agent.body.data.agentId;
      await before.stop();
      platform = await startTestPlatform({ dataDir: before.dataDir, python: MISSING_PYTHON, logLines });
    });

    afterAll(async () => {
      await platform?.stop({ removeData: true });
    });

    it('says at start, in one line, what to install or set', async () => {
      const line = await preflightLine(logLines);
      expect(line.level).toBe('warn');
      expect(line.message).toContain(`${MISSING_PYTHON} was not found`);
      expect(line.message).toContain('install Python 3.11 or 3.12');
      expect(line.message).toContain('PYTHON=/path/to/python3.11+');
      // One line: the spare runtime, which failed on the same lookup meanwhile, does not repeat it.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(logLines.filter((l) => l.includes(MISSING_PYTHON))).toHaveLength(1);
    });

    it('answers an action run 503 RUNTIME_UNAVAILABLE naming what to install, and bills nothing', async () => {
      const balance = await credits();
      const run = await platform.api('POST', `/action/${actionId}`, { token: owner.token, body: {} });
      const direct = await platform.api('GET', `/action/python-128mb/${actionId}`, { token: owner.token });
      expect(run.status).toBe(503);
      expect(run.body).toMatchObject({ success: false, error: { code: 'RUNTIME_UNAVAILABLE' } });
      expect(run.body.error.message).toContain(`${MISSING_PYTHON} was not found; install Python 3.11 or 3.12`);
      expect(direct.status).toBe(503);
      expect(direct.body.error.code).toBe('RUNTIME_UNAVAILABLE');
      expect(await credits()).toBe(balance);
    });

    it('answers inline code and the source checks of action and agent create 503 RUNTIME_UNAVAILABLE, never INTERNAL_ERROR', async () => {
      const inline = await platform.api('POST', '/action/python-128mb/inline-code', { token: owner.token, body: { code: ECHO_ACTION, event: {} } });
      const create = await platform.api('POST', '/action/create', {
        token: owner.token,
        body: { actionName: 'Ok2', description: 'answers ok', runtime: 'python3.12', sourceCode: ECHO_ACTION, category: 'testing' },
      });
      const agentCreate = await platform.api('POST', '/agent/create', {
        token: owner.token,
        body: { agentName: 'echo-two', description: 'echoes', sourceCode: ECHO_AGENT },
      });
      for (const res of [inline, create, agentCreate]) {
        expect(res.status).toBe(503);
        expect(res.body.error.code).toBe('RUNTIME_UNAVAILABLE');
        expect(res.body.error.message).toContain('PYTHON=/path/to/python3.11+');
      }
    });

    it('answers an agent chat 503 RUNTIME_UNAVAILABLE and refunds its credit', async () => {
      const balance = await credits();
      const chat = await platform.api('POST', `/agent/${agentId}/chat`, { token: owner.token, body: { prompt: 'hi' } });
      expect(chat.status).toBe(503);
      expect(chat.body).toMatchObject({ success: false, error: { code: 'RUNTIME_UNAVAILABLE' } });
      expect(chat.body.error.message).toContain(`${MISSING_PYTHON} was not found`);
      expect(await credits()).toBe(balance);
    });
  });
});
