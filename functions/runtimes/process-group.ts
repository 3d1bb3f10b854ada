/**
 * Process groups of the local runtimes' processes. Each runtime process is started in its own
 * group (`detached`), so that stopping the group also stops whatever the process started: the
 * Python runtime's fork server and running children, anything an MCP host might have spawned.
 * The /proc readers are Linux-only; elsewhere "gone" rests on the group's leader alone.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

/** Signals a whole process group; a group that is already gone is fine. */
export function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pgid, signal);
  } catch {
    // ESRCH: nothing left in the group
  }
}

/**
 * Waits (briefly, bounded) until no live process of the group is left, so callers can rely on
 * "gone". Zombies count as gone: an orphaned fork server is reaped by init, which may take its time.
 */
export async function waitForGroupGone(pgid: number, maxMs = 2000): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline && groupHasLiveMembers(pgid)) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

function groupHasLiveMembers(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch {
    return false;
  }
  return !existsSync('/proc/self/stat') || liveGroupMembers(pgid).length > 0;
}

/** Non-zombie processes of a process group, from /proc (Linux). */
export function liveGroupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = procStatFields(Number(entry));
    if (fields && Number(fields[2]) === pgid && fields[0] !== 'Z') members.push(Number(entry));
  }
  return members;
}

/** The parent pid from /proc (Linux); null where there is no /proc or the process is gone. */
export function parentPid(pid: number): number | null {
  const ppid = Number(procStatFields(pid)?.[1]);
  return Number.isInteger(ppid) && ppid > 0 ? ppid : null;
}

/** The fields of /proc/<pid>/stat after "pid (comm)": state, ppid, pgrp, ...; null if unreadable. */
function procStatFields(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm may contain spaces and parentheses, so split after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
