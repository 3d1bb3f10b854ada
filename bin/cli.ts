import { runCli } from './cli/main.ts';

/** `npm run cli -- <command>` and the `agent-platform` bin (bin/agent-platform.mjs): see bin/cli/main.ts. */
process.exitCode = await runCli(process.argv.slice(2));
