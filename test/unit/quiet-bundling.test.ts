/**
 * `npm run synth` (`-c quiet=true`) leaves out aws-cdk-lib's per-asset bundling lines and nothing
 * else: warnings and errors still reach stderr.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { dropBundlingLines } from '../../lib/cloud/quiet-bundling.ts';

function collecting(): { stream: Writable; written: string[] } {
  const written: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      written.push(chunk.toString());
      done();
    },
  });
  return { stream, written };
}

describe('quiet bundling', () => {
  it("drops aws-cdk-lib's bundling lines and keeps everything else", () => {
    const { stream, written } = collecting();
    dropBundlingLines(stream as unknown as NodeJS.WriteStream);
    stream.write('Bundling asset agent-platform-prod/Functions/Area-users/Function/Code/Stage...\n');
    stream.write('✘ [ERROR] Could not resolve "./missing.ts"\n');
    stream.write('▲ [WARNING] Duplicate key "a" in object literal\n');
    stream.write('Bundling asset is not done yet, and this line says something else\n');
    expect(written).toEqual([
      '✘ [ERROR] Could not resolve "./missing.ts"\n',
      '▲ [WARNING] Duplicate key "a" in object literal\n',
      'Bundling asset is not done yet, and this line says something else\n',
    ]);
  });
});
