import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The operators' files of ops/ (docs/operations.md): the Prometheus rules pass `promtool check rules` and their own
 * unit tests (`promtool test rules`), every alert is tested firing and not firing and has a runbook section, and the
 * Grafana dashboard uses only the metric catalogue (ops/metrics.json) through its datasource variable.
 */
const RULES = 'ops/prometheus/petsing-alerts.yaml';
const RULE_TESTS = 'ops/prometheus/petsing-alerts.test.yaml';
const PROMETHEUS_CONFIG = 'ops/prometheus/prometheus.example.yaml';
const DASHBOARD = 'ops/grafana/petsing-dashboard.json';
const RUNBOOK = 'docs/operations.md';

type Catalogue = { metrics: Record<string, { type: 'counter' | 'gauge' | 'histogram'; labels: Record<string, string[] | null> }> };
const catalogue = JSON.parse(readFileSync('ops/metrics.json', 'utf8')) as Catalogue;

const promtoolFound = spawnSync('promtool', ['--version'], { encoding: 'utf8' }).error === undefined;
const PROMTOOL_MISSING = 'promtool is not installed: `PETSING_TEST_TOOLS=1 bash infra/setup-host.sh` installs it (Debian\'s prometheus package)';
if (!promtoolFound && !process.env.CI) console.warn(`ops-rules: the promtool checks are skipped. ${PROMTOOL_MISSING}; in CI they run and it is required.`);
const promtool = (...args: string[]) => spawnSync('promtool', args, { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } });

// --- The rules file, read line by line (its layout is ours; no YAML parser is a dependency of the repository) ---

type Rule = { kind: 'alert' | 'record'; name: string; lines: string[]; expr: string };

/** The rules of a Prometheus rules file, each with its own lines and its expression (one line, `|` or `>` block). */
function rulesOf(text: string): Rule[] {
  const lines = text.split('\n');
  const rules: Rule[] = [];
  lines.forEach((line, index) => {
    const start = /^\s*- (alert|record): (\S+)\s*$/.exec(line);
    if (start) rules.push({ kind: start[1] as Rule['kind'], name: start[2]!, lines: [], expr: '' });
    else if (/^\s*- name: /.test(line)) return;
    const rule = rules.at(-1);
    if (!rule) return;
    rule.lines.push(line);
    const expr = /^(\s*)expr: ?(.*)$/.exec(line);
    if (!expr) return;
    if (!/^[|>][-+]?$/.test(expr[2]!.trim())) {
      rule.expr = expr[2]!.trim().replace(/^'(.*)'$/, '$1');
      return;
    }
    const block: string[] = [];
    for (const next of lines.slice(index + 1)) {
      if (next.trim() !== '' && next.search(/\S/) <= expr[1]!.length) break;
      block.push(next.trim());
    }
    rule.expr = block.join(' ').trim();
  });
  return rules;
}

// --- PromQL: the metric names and label names an expression uses ---

const KEYWORDS = new Set(['and', 'or', 'unless', 'by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'offset', 'inf', 'nan', 'atan2']);
const GROUPING = /\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)/g;

/** Every series selector of a PromQL expression (Grafana's `$__…` variables allowed) with its matchers. */
function selectorsOf(expr: string): { metric: string; matchers: { label: string; op: string; value: string }[] }[] {
  const withoutStrings: string[] = [];
  // Strings out first (a matcher's value may hold anything), numbered so matchers can get them back.
  let text = expr.replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, (literal) => `§${withoutStrings.push(literal.slice(1, -1)) - 1}§`);
  text = text.replace(/\$\{?\w+\}?/g, '5m').replace(/\[[^\]]*\]/g, ' ').replace(GROUPING, ' ').replace(/\boffset\s+-?\w+/g, ' ');
  const selectors: ReturnType<typeof selectorsOf> = [];
  const pattern = /([A-Za-z_:][A-Za-z0-9_:]*)?\s*(\{[^}]*\})?/g;
  for (let match = pattern.exec(text); match; match = pattern.exec(text)) {
    const [, name, braces] = match;
    if (!name && !braces) {
      if (match[0] === '') pattern.lastIndex += 1;
      continue;
    }
    const before = text[match.index - 1] ?? ' ';
    if (name && (/[0-9.]/.test(before) || KEYWORDS.has(name) || /^\s*\(/.test(text.slice(match.index + name.length)))) continue;
    const matchers = [...(braces ?? '').matchAll(/([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*§(\d+)§/g)].map(([, label, op, i]) => ({ label: label!, op: op!, value: withoutStrings[Number(i)]! }));
    if (!name) throw new Error(`a selector without a metric name in: ${expr}`);
    selectors.push({ metric: name, matchers });
  }
  return selectors;
}

/** The labels an expression groups or matches on (`by (…)`, `on (…)`, …). */
function groupingLabelsOf(expr: string): string[] {
  return [...expr.replace(/"(?:[^"\\]|\\.)*"/g, '""').matchAll(GROUPING)].flatMap(([, , labels]) => labels!.split(',').map((label) => label.trim()).filter(Boolean));
}

const recordedNames = new Set(rulesOf(readFileSync(RULES, 'utf8')).filter((rule) => rule.kind === 'record').map((rule) => rule.name));

/** The catalogue metric a series name belongs to (a histogram's _bucket, _sum and _count included), if any. */
function catalogueMetricOf(series: string): string | undefined {
  if (catalogue.metrics[series]) return series;
  const histogram = /^(.*)_(bucket|sum|count)$/.exec(series)?.[1];
  return histogram && catalogue.metrics[histogram]?.type === 'histogram' ? histogram : undefined;
}

/** What is wrong with an expression's names: series outside the catalogue, labels it does not have, values outside a closed set. */
function problemsOf(expr: string, allowRecorded: boolean): string[] {
  const problems: string[] = [];
  const selectors = selectorsOf(expr);
  const knownLabels = new Set(['job', 'instance']);
  let onlyCatalogue = true;
  for (const { metric, matchers } of selectors) {
    const catalogued = catalogueMetricOf(metric);
    if (!catalogued) {
      onlyCatalogue = false;
      const allowed = metric === 'up' || metric === 'ALERTS' || /^(temporal|process|nodejs)_/.test(metric) || (allowRecorded && recordedNames.has(metric));
      if (!allowed) problems.push(`${metric} is not in the metric catalogue (ops/metrics.json)`);
      continue;
    }
    const labels = catalogue.metrics[catalogued]!.labels;
    for (const label of Object.keys(labels)) knownLabels.add(label);
    if (metric.endsWith('_bucket')) knownLabels.add('le');
    for (const { label, op, value } of matchers) {
      if (label === 'job' || label === 'instance' || (label === 'le' && metric.endsWith('_bucket'))) continue;
      if (!(label in labels)) {
        problems.push(`${metric} has no label ${label}`);
        continue;
      }
      const closed = labels[label];
      const named = op === '=' || op === '!=' ? [value] : /^[\w|]+$/.test(value) ? value.split('|') : [];
      for (const one of named) if (closed && !closed.includes(one)) problems.push(`${metric}{${label}} takes ${closed.join('|')}, not ${one}`);
    }
  }
  if (onlyCatalogue) for (const label of groupingLabelsOf(expr)) if (!knownLabels.has(label)) problems.push(`no metric of this expression has the label ${label}`);
  return problems;
}

describe('PromQL name checks', () => {
  it('find the metrics, labels and values an expression names, and refuse unknown ones', () => {
    const expr = 'sum by (stage, le) (rate(petsing_render_stage_duration_seconds_bucket{device="gpu", stage=~"frames|encode"}[$__rate_interval])) / on () group_left sum(up{job="petsing-api"}) > 1e3';
    expect(selectorsOf(expr).map((selector) => selector.metric)).toEqual(['petsing_render_stage_duration_seconds_bucket', 'up']);
    expect(problemsOf(expr, false)).toEqual([]);
    expect(problemsOf('sum(rate(petsing_videos_faild_total[5m]))', false)).toEqual(['petsing_videos_faild_total is not in the metric catalogue (ops/metrics.json)']);
    expect(problemsOf('sum(rate(petsing_webhook_deliveries_total{outcome=~"failed|gave_up"}[5m]))', false)).toEqual(['petsing_webhook_deliveries_total{outcome} takes delivered|failed|abandoned, not gave_up']);
    expect(problemsOf('sum by (stgae) (rate(petsing_render_stage_duration_seconds_count{device="tpu"}[5m]))', false)).toEqual([
      'petsing_render_stage_duration_seconds_count{device} takes cpu|gpu, not tpu',
      'no metric of this expression has the label stgae',
    ]);
    expect(problemsOf('petsing:render_failure:ratio_rate15m', false)).toHaveLength(1);
    expect(problemsOf('petsing:render_failure:ratio_rate15m', true)).toEqual([]);
    expect(problemsOf('sum(rate(temporal_num_pollers[5m])) + nodejs_eventloop_lag_p99_seconds + process_cpu_seconds_total', false)).toEqual([]);
    expect(() => selectorsOf('{__name__="petsing_render_backlog"}')).toThrow('without a metric name');
  });
});

describe('Prometheus rules', () => {
  const text = readFileSync(RULES, 'utf8');
  const rules = rulesOf(text);
  const alerts = rules.filter((rule) => rule.kind === 'alert');

  it('define the alerts of issue 25, each with for, severity, summary, description and a runbook section', () => {
    expect(new Set(alerts.map((alert) => alert.name))).toEqual(new Set([
      'PetsingRenderBacklogTooOld', 'PetsingNoRenderWorker', 'PetsingRenderFailureRateHigh', 'PetsingRefundSpike',
      'PetsingWebhookDeliveriesFailing', 'PetsingApiDown', 'PetsingApiErrorRatioHigh', 'PetsingApiLatencyHigh', 'PetsingControlWorkerDown',
    ]));
    // The anchors GitHub gives the runbook's headings.
    const anchors = new Set([...readFileSync(RUNBOOK, 'utf8').matchAll(/^#+ (.+)$/gm)].map(([, heading]) => heading!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-')));
    for (const alert of alerts) {
      const body = alert.lines.join('\n');
      expect(body, alert.name).toMatch(/^\s+for: \d+[smh]$/m);
      expect(body, alert.name).toMatch(/^\s+severity: (critical|warning)$/m);
      expect(body, alert.name).toMatch(/^\s+summary: \S/m);
      expect(body, alert.name).toMatch(/^\s+description: \S/m);
      const runbook = /^\s+runbook_url: (\S+)$/m.exec(body)?.[1];
      expect(runbook, alert.name).toBe(`${RUNBOOK}#${alert.name.toLowerCase()}`);
      expect(anchors.has(alert.name.toLowerCase()), `${RUNBOOK} has a section "${alert.name}"`).toBe(true);
    }
  });

  it('use only the metric catalogue, up, the Temporal SDK metrics and their own recording rules, which sit in a group of their own', () => {
    for (const rule of rules) expect(problemsOf(rule.expr, true), `${rule.name}: ${rule.expr}`).toEqual([]);
    const groups = text.split(/^\s+- name: /m).slice(1);
    expect(groups.map((group) => [group.split('\n')[0], /- alert: /.test(group), /- record: /.test(group)])).toEqual([
      ['petsing-recording', false, true],
      ['petsing-alerts', true, false],
    ]);
  });

  it('are unit-tested: every alert fires in one case and stays quiet in another', () => {
    const tests = readFileSync(RULE_TESTS, 'utf8');
    const cases = [...tests.matchAll(/alertname: (\S+)\s*\n\s*exp_alerts:(.*)\n(\s*-)?/g)].map(([, name, inline, item]) => ({ name: name!, fires: inline!.trim() !== '[]' && item !== undefined }));
    for (const alert of new Set(alerts.map((rule) => rule.name))) {
      expect(cases.some((one) => one.name === alert && one.fires), `${alert} fires in a case`).toBe(true);
      expect(cases.some((one) => one.name === alert && !one.fires), `${alert} stays quiet in a case`).toBe(true);
    }
  });

  describe.skipIf(!promtoolFound && !process.env.CI)('with promtool', () => {
    it('promtool is installed (CI must run these checks: PETSING_TEST_TOOLS=1 bash infra/setup-host.sh installs it)', () => {
      expect(promtoolFound, PROMTOOL_MISSING).toBe(true);
    });

    it('promtool check rules accepts the rules', () => {
      const checked = promtool('check', 'rules', RULES);
      expect(checked.stdout + checked.stderr).toContain('SUCCESS');
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    });

    it('promtool test rules passes the unit tests of ops/prometheus/petsing-alerts.test.yaml', () => {
      const tested = promtool('test', 'rules', RULE_TESTS);
      expect(tested.status, tested.stdout + tested.stderr).toBe(0);
      expect(tested.stdout).toContain('SUCCESS');
    });

    it('promtool check config accepts the example Prometheus configuration (and the rules it loads)', () => {
      const checked = promtool('check', 'config', PROMETHEUS_CONFIG);
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
    });
  });
});

describe('Grafana dashboard', () => {
  type Target = { expr?: string; refId?: string; datasource?: unknown };
  type Panel = { id: number; type: string; title: string; targets?: Target[]; datasource?: unknown; panels?: Panel[] };
  const dashboard = JSON.parse(readFileSync(DASHBOARD, 'utf8')) as {
    schemaVersion: number;
    panels: Panel[];
    templating: { list: { name: string; type: string; query: string }[] };
    annotations?: { list: { expr?: string }[] };
    __inputs?: unknown;
  };
  const panels = dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
  const queries = [
    ...panels.flatMap((panel) => (panel.targets ?? []).map((target) => ({ where: `panel ${panel.id} "${panel.title}" ${target.refId}`, expr: target.expr ?? '' }))),
    ...(dashboard.annotations?.list ?? []).filter((annotation) => annotation.expr).map((annotation) => ({ where: 'annotation', expr: annotation.expr! })),
  ];

  it('is a schemaVersion 39+ dashboard whose every data source is the ${datasource} variable', () => {
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(39);
    expect(dashboard.templating.list).toContainEqual(expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }));
    expect(dashboard.__inputs).toBeUndefined();
    const datasources: unknown[] = [];
    const walk = (node: unknown): void => {
      if (Array.isArray(node)) node.forEach(walk);
      else if (node && typeof node === 'object') {
        for (const [key, value] of Object.entries(node)) {
          if (key === 'datasource') datasources.push(value);
          walk(value);
        }
      }
    };
    walk(dashboard);
    expect(datasources.length).toBeGreaterThan(panels.length);
    for (const datasource of datasources) expect(datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
    for (const panel of panels.filter((one) => one.type !== 'row')) expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
  });

  it('queries only the metric catalogue, up, ALERTS, temporal_*, prom-client defaults and our recording rules', () => {
    expect(queries.length).toBeGreaterThan(30);
    for (const { where, expr } of queries) expect(problemsOf(expr, true), `${where}: ${expr}`).toEqual([]);
  });

  it('shows every metric of the catalogue and the saturation and Temporal worker metrics', () => {
    const recorded = rulesOf(readFileSync(RULES, 'utf8')).filter((rule) => rule.kind === 'record');
    const shown = new Set<string>();
    const add = (expr: string): void => {
      for (const { metric } of selectorsOf(expr)) {
        shown.add(catalogueMetricOf(metric) ?? metric);
        const rule = recorded.find((one) => one.name === metric);
        if (rule) add(rule.expr);
      }
    };
    for (const { expr } of queries) add(expr);
    const missing = [...Object.keys(catalogue.metrics), 'process_cpu_seconds_total', 'nodejs_eventloop_lag_p99_seconds', 'temporal_worker_task_slots_available', 'temporal_activity_schedule_to_start_latency_seconds_bucket'].filter((metric) => !shown.has(metric));
    expect(missing).toEqual([]);
  });

  describe.skipIf(!promtoolFound && !process.env.CI)('with promtool', () => {
    let directory: string;
    beforeAll(async () => {
      directory = await mkdtemp(join(tmpdir(), 'petsing-dashboard-'));
    });
    afterAll(() => rm(directory, { recursive: true, force: true }));

    it('every query parses as PromQL (checked as recording rules by promtool, with Grafana variables filled in)', async () => {
      // JSON is YAML: one recording rule per query.
      const rules = queries.map(({ expr }, index) => ({ record: `dashboard_query_${index}`, expr: expr.replace(/\$__rate_interval|\$__interval|\$__range/g, '5m') }));
      const file = join(directory, 'dashboard-queries.yaml');
      await writeFile(file, JSON.stringify({ groups: [{ name: 'dashboard', rules }] }));
      const checked = promtool('check', 'rules', file);
      expect(checked.status, checked.stdout + checked.stderr).toBe(0);
      expect(checked.stdout).toContain(`SUCCESS: ${rules.length} rules found`);
    });
  });
});
