import { spawn } from 'node:child_process';
import { blankFreeText, pdfBomb } from '../support/hostile-inputs.ts';
import { DEFAULT_SPARES } from '../../lib/local/platform.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';
import { repoRoot, type BenchModule } from './harness.ts';
import { measured, versus, type MeasuredRow } from './stats.ts';

const REST_SAMPLES = 200;
const TWILIO_SOCKETS = 10;
const TWILIO_FRAMES = 250;

/**
 * Another tenant's `GET /health`, asked one after another while `attack` runs (at least `min`
 * times): its latency is the platform's event-loop delay under the attack, client and platform
 * sharing one loop as the local platform's requests do.
 */
async function healthWhile(platform: TestPlatform, attack: Promise<unknown>, min = 20): Promise<number[]> {
  let done = false;
  const finished = attack.finally(() => {
    done = true;
  });
  const samples: number[] = [];
  while (!done || samples.length < min) {
    const startedAt = performance.now();
    await fetch(`${platform.url}/health`).then((r) => r.arrayBuffer());
    samples.push(performance.now() - startedAt);
  }
  await finished;
  return samples;
}

/**
 * Sockets opened to `/ws/twilio/{anyId}` without a token, each sending `frames` large media frames,
 * from a process of their own: an attacker's masking and sending is not the platform's work.
 */
async function twilioFlood(voiceUrl: string): Promise<void> {
  const script = `
    const WebSocket = require('ws');
    const frame = JSON.stringify({ event: 'media', streamSid: 'MZ1', media: { payload: Buffer.alloc(45000, 0x55).toString('base64') } });
    let open = ${TWILIO_SOCKETS};
    for (let i = 0; i < ${TWILIO_SOCKETS}; i++) {
      const ws = new WebSocket(${JSON.stringify(voiceUrl)} + '/ws/twilio/00000000-0000-4000-8000-' + String(i).padStart(12, '0'));
      const done = () => { if (--open === 0) process.exit(0); };
      ws.once('open', () => { for (let n = 0; n < ${TWILIO_FRAMES}; n++) ws.send(frame); });
      ws.once('close', done);
      ws.once('error', () => {});
    }`;
  const child = spawn(process.execPath, ['-e', script], { cwd: repoRoot, stdio: 'ignore' });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', () => resolve());
    child.once('error', reject);
  });
}

/**
 * Issue 30's hostile inputs against the local platform, each with another caller's `GET /health`
 * running beside it: the delay it sees (p50, p99) next to the same figure at rest. The attacks: a
 * PDF whose 40 pages share one compressed stream, 5 MB of text without a blank (then a search of
 * it, which builds its index), and unauthenticated Twilio sockets sending audio.
 */
export const hostileBench: BenchModule = {
  name: 'hostile',
  async run({ progress, defer }) {
    const platform = await startTestPlatform({ ...DEFAULT_SPARES });
    defer(() => platform.stop({ removeData: true }));
    const user = await createUser(platform, { credits: 10 });
    const voiceUrl = (await platform.api('GET', '/.well-known/platform.json')).body.data.voiceUrl as string;
    const upload = (fileName: string, content: string, isBase64 = false) =>
      platform.api<{ data: { indexStatus: string } }>('POST', '/knowledge/upload', { token: user.token, body: { fileName, content, isBase64 } });

    progress('hostile: /health at rest');
    const rest: number[] = [];
    for (let i = 0; i < REST_SAMPLES; i++) {
      const startedAt = performance.now();
      await fetch(`${platform.url}/health`).then((r) => r.arrayBuffer());
      rest.push(performance.now() - startedAt);
    }
    const atRest = measured('GET /health at rest', rest);
    const rows: MeasuredRow[] = [atRest];
    const row = (name: string, samples: number[], note: string) => rows.push(versus(measured(name, samples, { note }), atRest));

    progress('hostile: PDF bomb');
    const bomb = pdfBomb(40, 4_000);
    let status = '';
    const bombSamples = await healthWhile(
      platform,
      upload('bomb.pdf', bomb.toString('base64'), true).then((r) => (status = `${r.status} ${r.body.data?.indexStatus ?? ''}`)),
    );
    row('GET /health during a PDF bomb upload', bombSamples, `${Math.round(bomb.length / 1024)} KB, 40 pages; upload ${status}`);

    progress('hostile: 5 MB without blanks');
    const blob = blankFreeText(5 * 1024 * 1024 - 1024);
    const blobSamples = await healthWhile(
      platform,
      upload('blob.txt', blob).then((r) => (status = `${r.status} ${r.body.data?.indexStatus ?? ''}`)),
    );
    row('GET /health during a 5 MB blank-free upload', blobSamples, `upload ${status}`);
    const searchSamples = await healthWhile(
      platform,
      platform.api('POST', '/knowledge/search', { token: user.token, body: { query: blob.slice(1000, 1040) } }).then((r) => (status = String(r.status))),
    );
    row('GET /health during the first search of it', searchSamples, `search ${status} (builds the partition's index)`);

    progress('hostile: Twilio sockets without a token');
    const twilioSamples = await healthWhile(platform, twilioFlood(voiceUrl));
    row('GET /health during a Twilio media flood', twilioSamples, `${TWILIO_SOCKETS} sockets x ${TWILIO_FRAMES} frames of 60 KB`);
    return rows;
  },
};
