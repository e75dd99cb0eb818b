import { freePort, portsFree } from './processes.ts';

/** One series of a scrape: its name, its labels, its value. */
export type Series = { name: string; labels: Record<string, string>; value: number };

/** The Prometheus text format, as far as the tests and benchmarks read it (no escaped quotes in our label values). */
export function parseScrape(text: string): Series[] {
  const series: Series[] = [];
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)$/.exec(line);
    if (!match) continue;
    const labels: Record<string, string> = {};
    for (const [, name, value] of (match[2] ?? '').matchAll(/(\w+)="([^"]*)"/g)) labels[name!] = value!;
    series.push({ name: match[1]!, labels, value: Number(match[3]) });
  }
  return series;
}

/** The sum of the series named `name` whose labels include `labels` (0 when there is none yet). */
export function total(scrape: Series[], name: string, labels: Record<string, string> = {}): number {
  return scrape
    .filter((series) => series.name === name && Object.entries(labels).every(([label, value]) => series.labels[label] === value))
    .reduce((sum, series) => sum + series.value, 0);
}

/** A free port for METRICS_PORT whose neighbour 100 above (the Temporal SDK's metrics) is free too. */
export async function freeMetricsPort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = await freePort();
    if (port + 100 <= 65_535 && (await portsFree([port + 100]))) return port;
  }
  throw new Error('no free pair of metrics ports');
}
