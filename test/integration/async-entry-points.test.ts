/**
 * Queue and storage-event entry points on the real local platform: the sample area hands notes
 * off from a route to its queue, which retries failures, keeps dead letters, sets aside payloads
 * its schema refuses and keeps pending tasks across a restart; an object written to the blob store
 * (a real PutObject, a presigned PUT) runs its storage event. Time is the platform's steppable
 * clock: a test moves it past a delay or a backoff and waits for the queue to be idle.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3Access } from '../../functions/core/blobs.ts';
import { TaskSendError } from '../../functions/core/tasks/tasks.ts';
import { portsForArea } from '../../functions/ports.ts';
import { areas } from '../../lib/manifest/index.ts';
import { neighbourArea, sampleArea } from '../fixtures/sample-area/sample.module.ts';
import { createUser, startTestPlatform, type TestPlatform } from '../support/local-platform.ts';

const served = [...areas.filter((area) => area.name !== 'voice'), sampleArea, neighbourArea];

/** Delivers what is due, then moves the clock past any backoff, a bounded number of times. */
async function runQueueDown(platform: TestPlatform, rounds = 5): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    await platform.running.tasks.idle();
    platform.clock.advance(10 * 60_000);
  }
  await platform.running.tasks.idle();
}

const linesWith = (lines: string[], message: string) => lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l['message'] === message);

describe('queue and storage-event entry points on the local platform', () => {
  let platform: TestPlatform;
  let token: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    platform = await startTestPlatform({ areas: served, logLines });
    token = (await createUser(platform, { alias: 'async-owner' })).token;
  });
  afterAll(() => platform.stop({ removeData: true }));

  it('retries a failing task with backoff until it succeeds', async () => {
    // Prepare
    const sent = await platform.api('POST', '/sample/notes', { token, body: { text: 'third time lucky', failFirst: 2 } });
    const taskId = sent.body.data.taskId as string;

    // Act
    await runQueueDown(platform);

    // Assess
    expect(sent.status).toBe(202);
    const ended = linesWith(logLines, 'task run ended; it will be retried').filter((l) => l['taskId'] === taskId);
    expect(ended.map((l) => l['attempt'])).toEqual([1, 2]);
    expect(linesWith(logLines, 'sample: note filed').find((l) => l['taskId'] === taskId)).toMatchObject({ attempt: 3, entryPoint: 'sample.file-note' });
    expect((await platform.running.ports.blobs.get(`sample-notes/${taskId}.txt`))?.toString()).toBe('third time lucky');
    expect((await platform.running.tasks.list('sample.file-note')).find((t) => t.taskId === taskId)).toBeUndefined();
  });

  it('keeps a task that fails on every attempt as a dead letter after maxAttempts, logged at error', async () => {
    // Prepare
    const sent = await platform.api('POST', '/sample/notes', { token, body: { text: 'never', failFirst: 10 } });
    const taskId = sent.body.data.taskId as string;

    // Act
    await runQueueDown(platform);

    // Assess
    const kept = (await platform.running.tasks.list('sample.file-note')).find((t) => t.taskId === taskId);
    expect(kept).toMatchObject({ state: 'dead', attempt: 3, setAside: { reason: 'max-attempts', outcome: 'failed' }, body: '{"text":"never","failFirst":10}' });
    expect(linesWith(logLines, 'task set aside as a dead letter').find((l) => l['taskId'] === taskId)).toMatchObject({ level: 'error', attempts: 3 });
    expect(await platform.running.ports.blobs.get(`sample-notes/${taskId}.txt`)).toBeNull();
  });

  it('sets a payload the handler’s schema refuses aside at once, without running it', async () => {
    // Prepare: a send that bypasses the route's own validation
    const tasks = portsForArea(platform.running.ports, sampleArea).tasks;

    // Act
    const { taskId } = await tasks.send('file-note', { text: 42 });
    await runQueueDown(platform);

    // Assess
    const kept = (await platform.running.tasks.list('sample.file-note')).find((t) => t.taskId === taskId);
    expect(kept).toMatchObject({ state: 'dead', attempt: 1, setAside: { reason: 'invalid-payload' } });
    expect(linesWith(logLines, 'task set aside: its payload does not fit the handler').find((l) => l['taskId'] === taskId)).toMatchObject({
      level: 'error',
      issues: [expect.stringMatching(/^text: /)],
    });
  });

  it("refuses a send to another area's queue, and delivers each area's tasks to its own queue", async () => {
    // Prepare
    const sample = portsForArea(platform.running.ports, sampleArea).tasks;
    const neighbour = portsForArea(platform.running.ports, neighbourArea).tasks;

    // Act
    const foreign = await sample.send('neighbour.file-note', { text: 'not yours' }).then(
      () => 'sent',
      (error: unknown) => error,
    );
    const own = await neighbour.send('file-note', { text: 'next door' });
    await runQueueDown(platform);

    // Assess
    expect(foreign).toBeInstanceOf(TaskSendError);
    expect((foreign as Error).message).toContain('The sample area has no queue entry point named "neighbour.file-note"');
    expect(linesWith(logLines, 'sample: note filed').find((l) => l['taskId'] === own.taskId)).toMatchObject({ entryPoint: 'neighbour.file-note' });
    expect((await platform.running.ports.blobs.get(`sample-notes/${own.taskId}.txt`))?.toString()).toBe('next door');
  });

  it('runs the storage event for objects written under its prefix, by PutObject and by presigned PUT, with the key as written', async () => {
    // Prepare
    const { client: s3 } = await createS3Access(platform.running.ports.config)();
    const Bucket = `${platform.running.ports.config.BUCKET_PREFIX}blobs`;
    const presigned = await getSignedUrl(s3, new PutObjectCommand({ Bucket, Key: 'sample-inbox/pre signed.txt' }), { expiresIn: 60 });

    // Act
    await s3.send(new PutObjectCommand({ Bucket, Key: 'sample-inbox/report 1+2 é.txt', Body: 'twelve bytes' }));
    const put = await fetch(presigned, { method: 'PUT', body: 'abc' });
    await s3.send(new PutObjectCommand({ Bucket, Key: 'elsewhere/ignored.txt', Body: 'x' }));
    await platform.running.storageEvents.idle();
    await runQueueDown(platform);

    // Assess
    expect(put.status).toBe(200);
    const seen = linesWith(logLines, 'sample: upload seen');
    expect(seen.map((l) => l['key']).sort()).toEqual(['sample-inbox/pre signed.txt', 'sample-inbox/report 1+2 é.txt']);
    const report = seen.find((l) => l['key'] === 'sample-inbox/report 1+2 é.txt')!;
    expect(report).toMatchObject({ entryPoint: 'sample.index-upload', bucket: 'blobs', size: 12, etag: expect.stringMatching(/^[0-9a-f]{32}$/) });
    const note = await platform.running.ports.blobs.get(`sample-notes/${String(report['taskId'])}.txt`);
    expect(note?.toString()).toBe('uploaded sample-inbox/report 1+2 é.txt (12 bytes)');
  });
});

describe('the local task queue across a restart', () => {
  it('keeps a delayed task pending when the platform stops and runs it after the next start', async () => {
    // Prepare: a task due in ten minutes, and the platform stopped before then
    const first = await startTestPlatform({ areas: served });
    const user = await createUser(first, { alias: 'restart-owner' });
    const sent = await first.api('POST', '/sample/notes', { token: user.token, body: { text: 'after the restart', delaySec: 600 } });
    const taskId = sent.body.data.taskId as string;
    await first.running.tasks.idle();
    const beforeStop = await first.running.tasks.list('sample.file-note');
    await first.stop();

    // Act
    const lines: string[] = [];
    const second = await startTestPlatform({ areas: served, dataDir: first.dataDir, logLines: lines });
    try {
      const afterStart = await second.running.tasks.list('sample.file-note');
      await second.running.tasks.idle();
      const notYetDue = await second.running.ports.blobs.get(`sample-notes/${taskId}.txt`);
      second.clock.advance(601_000);
      await second.running.tasks.idle();

      // Assess
      expect(sent.status).toBe(202);
      expect(beforeStop).toMatchObject([{ taskId, state: 'pending', attempt: 0 }]);
      expect(afterStart).toMatchObject([{ taskId, state: 'pending', attempt: 0 }]);
      expect(linesWith(lines, 'local task queue resumed pending tasks')).toMatchObject([{ tasks: 1 }]);
      expect(notYetDue).toBeNull();
      expect((await second.running.ports.blobs.get(`sample-notes/${taskId}.txt`))?.toString()).toBe('after the restart');
      expect(await second.running.tasks.list('sample.file-note')).toEqual([]);
    } finally {
      await second.stop({ removeData: true });
    }
  });
});
