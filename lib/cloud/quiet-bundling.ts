/** What aws-cdk-lib writes to stderr before bundling each asset, one write per asset. */
const BUNDLING_LINE = /^Bundling asset \S+\.\.\.\n$/;

type Write = (chunk: unknown, ...rest: unknown[]) => boolean;

/**
 * Drops aws-cdk-lib's `Bundling asset <path>...` lines from `stream`, passing everything else
 * through (esbuild's warnings and errors included). aws-cdk-lib writes them for every asset
 * whatever the CLI's `--quiet`, which the app is never told of: `npm run synth` passes
 * `-c quiet=true` instead (bin/platform.ts).
 */
export function dropBundlingLines(stream: Pick<NodeJS.WriteStream, 'write'>): void {
  const write = stream.write.bind(stream) as Write;
  const filtered: Write = (chunk, ...rest) => (typeof chunk === 'string' && BUNDLING_LINE.test(chunk) ? true : write(chunk, ...rest));
  stream.write = filtered as typeof stream.write;
}
