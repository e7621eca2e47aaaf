/**
 * Wall and CPU time of the two test suites (README.md, "Tests"), recorded in BENCHMARKS.md
 * between the `test-suites` markers. Each suite runs alone, one after the other; the machine's
 * load average is recorded beside the figures because wall time on a shared machine says little
 * without it (CPU time, user + system of every process the suite starts, says more).
 *
 *   npx tsx bench/test-suites.ts [--only test|hardening] [--no-write]
 */
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { PROJECT_ROOT } from '../src/paths.js';

interface SuiteFigures {
  suite: string;
  script: string;
  ok: boolean;
  tests: string;
  wallSeconds: number;
  cpuSeconds: number;
  load: string;
  date: string;
}

const SUITES = [
  { suite: 'test', script: 'npm test' },
  { suite: 'hardening', script: 'npm run test:hardening' },
];
const START = '<!-- test-suites:start -->';
const END = '<!-- test-suites:end -->';

/** Runs `script` under bash's `time` (which counts the CPU of every descendant process). */
function timed(script: string): Promise<{ ok: boolean; tests: string; wall: number; cpu: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-c', `TIMEFORMAT='%R %U %S'; time (${script} > /tmp/lq-test-suite.log 2>&1)`], {
      cwd: PROJECT_ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      const [wall, user, sys] = err.trim().split('\n').pop()!.split(' ').map(Number);
      const log = readFileSync('/tmp/lq-test-suite.log', 'utf8');
      const passing = /(\d+) passing/.exec(log)?.[1] ?? '0';
      const failing = /(\d+) failing/.exec(log)?.[1];
      resolve({ ok: code === 0, tests: failing ? `${passing} passing, ${failing} failing` : `${passing} passing`, wall, cpu: user + sys });
    });
  });
}

function render(rows: SuiteFigures[]): string {
  const lines = [
    '| suite | command | tests | wall | CPU (user + sys) | load average (1 min) at start / end | run |',
    '|---|---|---|---|---|---|---|',
    ...rows.map(
      (r) =>
        `| ${r.suite} | \`${r.script}\` | ${r.tests}${r.ok ? '' : ' (exit ≠ 0)'} | ${r.wallSeconds.toFixed(0)} s | ${r.cpuSeconds.toFixed(0)} s | ${r.load} | ${r.date} |`,
    ),
  ];
  return lines.join('\n');
}

/** Rows already in BENCHMARKS.md, to keep the suites this run leaves out. */
function previousRows(text: string): Map<string, string> {
  const block = text.slice(text.indexOf(START) + START.length, text.indexOf(END));
  const rows = new Map<string, string>();
  for (const line of block.split('\n')) {
    const suite = /^\| (test|hardening) \|/.exec(line)?.[1];
    if (suite) rows.set(suite, line);
  }
  return rows;
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const results: SuiteFigures[] = [];
  for (const { suite, script } of SUITES) {
    if (only && only !== suite) continue;
    const before = os.loadavg()[0].toFixed(1);
    console.log(`${script} …`);
    const r = await timed(script);
    const figures: SuiteFigures = {
      suite,
      script,
      ok: r.ok,
      tests: r.tests,
      wallSeconds: r.wall,
      cpuSeconds: r.cpu,
      load: `${before} / ${os.loadavg()[0].toFixed(1)}`,
      date: new Date().toISOString().slice(0, 10),
    };
    console.log(`  ${figures.tests}; wall ${r.wall.toFixed(1)} s, CPU ${r.cpu.toFixed(1)} s, load ${figures.load}`);
    results.push(figures);
  }
  if (args.includes('--no-write')) return;
  const file = `${PROJECT_ROOT}/BENCHMARKS.md`;
  const text = readFileSync(file, 'utf8');
  const kept = previousRows(text);
  const table = render(results).split('\n');
  const body = [table[0], table[1]];
  for (const { suite } of SUITES) {
    const fresh = table.find((l) => l.startsWith(`| ${suite} |`));
    const line = fresh ?? kept.get(suite);
    if (line) body.push(line);
  }
  const next = text.slice(0, text.indexOf(START) + START.length) + '\n' + body.join('\n') + '\n' + text.slice(text.indexOf(END));
  writeFileSync(file, next);
}

await main();
