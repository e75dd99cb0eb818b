import { readdirSync, readFileSync } from 'node:fs';

/** Nearest-rank percentile of unsorted values. */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

export const ms = (value: number) => (Number.isFinite(value) ? `${Math.round(value)}` : '–');

/** Prints a Markdown table, so a run's output can be pasted into docs/benchmarks.md as it is. */
export function printTable(header: string[], rows: (string | number)[][]): void {
  const cells = [header, ...rows.map((row) => row.map(String))];
  const widths = header.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => `| ${row.map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join(' | ')} |`;
  console.log(line(header));
  console.log(`| ${widths.map((width, column) => (column === 0 ? '-'.repeat(width) : `${'-'.repeat(width - 1)}:`)).join(' | ')} |`);
  for (const row of cells.slice(1)) console.log(line(row));
}

const TICKS_PER_SECOND = 100;

/** CPU seconds by whom, read from /proc (Linux only; elsewhere every figure is NaN). */
export type CpuSample = { busy: number; total: number; self: number; children: number; server: number; postgres: number };

export function sampleCpu(serverPid: number | undefined): CpuSample {
  try {
    const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
    const fields = cpu!.trim().split(/\s+/).slice(1).map(Number);
    const idle = fields[3]! + fields[4]!;
    const total = fields.reduce((sum, value) => sum + value, 0);
    const self = procTimes('self');
    const server = serverPid ? procTimes(String(serverPid)) : [Number.NaN, Number.NaN];
    return {
      postgres: postgresSeconds(),
      busy: (total - idle) / TICKS_PER_SECOND,
      total: total / TICKS_PER_SECOND,
      self: self[0]!,
      // Children that exited and were reaped: here the ffmpeg/ffprobe runs of audio preparation.
      children: self[1]!,
      server: server[0]! + server[1]!,
    };
  } catch {
    return { busy: Number.NaN, total: Number.NaN, self: Number.NaN, children: Number.NaN, server: Number.NaN, postgres: Number.NaN };
  }
}

/** [own utime+stime, reaped children's cutime+cstime] in seconds. */
function procTimes(pid: string): [number, number] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name may hold spaces; fields are counted from after its closing parenthesis.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
  return [(fields[11]! + fields[12]!) / TICKS_PER_SECOND, (fields[13]! + fields[14]!) / TICKS_PER_SECOND];
}

/**
 * Every postgres process, reaped backends included (they land in the postmaster's cutime). The server is
 * the machine's own, so this counts other sessions' queries too.
 */
function postgresSeconds(): number {
  let total = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) !== 'postgres') continue;
      const [own, children] = procTimes(pid);
      total += own + children;
    } catch {
      // The process exited between the listing and the read.
    }
  }
  return total;
}

/**
 * CPU seconds of a process tree by part: the process itself, its children that exited and were reaped (cutime),
 * its live descendants (with what they reaped), and every postgres process of the machine.
 */
export type TreeSeconds = { service: number; reaped: number; live: number; postgres: number };

export function processTreeSeconds(pid: number): TreeSeconds {
  const [own, reaped] = procTimes(String(pid));
  const parents = new Map<number, number>();
  for (const entry of readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Exited between the listing and the read.
    }
  }
  const descends = (child: number): boolean => {
    for (let parent = parents.get(child); parent !== undefined && parent > 1; parent = parents.get(parent)) if (parent === pid) return true;
    return false;
  };
  let live = 0;
  for (const child of parents.keys()) {
    if (!descends(child)) continue;
    try {
      const [childOwn, childReaped] = procTimes(String(child));
      live += childOwn + childReaped;
    } catch {
      // Exited meanwhile; its time went to its parent's cutime.
    }
  }
  return { service: own, reaped, live, postgres: postgresSeconds() };
}
