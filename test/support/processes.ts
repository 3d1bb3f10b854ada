import { readdirSync, readFileSync } from 'node:fs';

interface ProcessEntry {
  readonly pid: number;
  readonly ppid: number;
  /** Its process group. */
  readonly pgrp: number;
  /** The state letter (Z: a zombie). */
  readonly state: string;
  /** The command line's arguments, the program first (empty for a zombie). */
  readonly args: string[];
}

/** The machine's processes from /proc; one that ends while it is read is left out. */
function listProcesses(): ProcessEntry[] {
  const entries: ProcessEntry[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // After the command name in parentheses, which may hold spaces: state, ppid, pgrp, ...
      const [state = '', ppid, pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const args = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0').filter(Boolean);
      entries.push({ pid: Number(name), ppid: Number(ppid), pgrp: Number(pgrp), state, args });
    } catch {
      // it ended meanwhile
    }
  }
  return entries;
}

/**
 * Pids of the processes under `root` (this test file's process by default) whose command line
 * `matches`. Test files run side by side, so a look at every process on the machine would also
 * see the sessions and runtimes of the platform another file started.
 */
export function descendantProcesses(matches: (args: readonly string[]) => boolean, root = process.pid): number[] {
  const all = listProcesses();
  const children = new Map<number, ProcessEntry[]>();
  for (const entry of all) children.set(entry.ppid, [...(children.get(entry.ppid) ?? []), entry]);
  const found: number[] = [];
  const pending = [...(children.get(root) ?? [])];
  for (let entry = pending.pop(); entry !== undefined; entry = pending.pop()) {
    if (matches(entry.args)) found.push(entry.pid);
    pending.push(...(children.get(entry.pid) ?? []));
  }
  return found;
}

/** Pids of the live (non-zombie) processes in process group `pgid`. */
export function liveGroupMembers(pgid: number): number[] {
  return listProcesses()
    .filter((entry) => entry.pgrp === pgid && entry.state !== 'Z')
    .map((entry) => entry.pid);
}
