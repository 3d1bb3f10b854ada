import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import { CliError } from './errors.ts';

/**
 * A secret (a token, a key's value) from standard input, never echoed: on a terminal it prompts on
 * stderr and reads one line with echo off; from a pipe it reads everything, without the final line
 * break, so `printf %s "$TOKEN" | ...` and `... < file` both work.
 */
export async function readSecret(prompt: string): Promise<string> {
  const value = process.stdin.isTTY ? await readHiddenLine(prompt) : await readPipe();
  if (value.trim() === '') throw new CliError('Nothing was read from standard input.');
  return value.replace(/\r?\n$/, '');
}

async function readPipe(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** readline in terminal mode turns the terminal's own echo off; its echo goes to a sink instead. */
function readHiddenLine(prompt: string): Promise<string> {
  process.stderr.write(prompt);
  const sink = new Writable({ write: (_chunk, _encoding, done) => done() });
  const lines = createInterface({ input: process.stdin, output: sink, terminal: true });
  return new Promise((resolve, reject) => {
    lines.once('line', (line) => {
      lines.close();
      process.stderr.write('\n');
      resolve(line);
    });
    lines.once('SIGINT', () => {
      lines.close();
      process.stderr.write('\n');
      reject(new CliError('Cancelled.'));
    });
  });
}
