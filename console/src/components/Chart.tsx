/**
 * A time series of the result with uPlot: x is the first timestamp column, one series per numeric
 * column. Shown only when the result has both (console/src/components/values.ts).
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { Row } from '../api/client';
import { columnsOf, kindOf, timestampMs } from './values';

const COLOURS = ['#2563eb', '#16a34a', '#ea580c', '#9333ea', '#db2777', '#0891b2', '#ca8a04', '#4b5563'];

export function chartable(rows: Row[]): { x: string; series: string[] } | undefined {
  const columns = columnsOf(rows);
  const x = columns.find((c) => kindOf(rows, c) === 'timestamp');
  const series = columns.filter((c) => kindOf(rows, c) === 'number');
  return x && series.length ? { x, series } : undefined;
}

export function Chart({ rows }: { rows: Row[] }) {
  const holder = useRef<HTMLDivElement>(null);
  const plan = chartable(rows);
  useEffect(() => {
    if (!plan || !holder.current) return;
    const points = rows
      .map((r) => ({ t: (timestampMs(r[plan.x]) ?? NaN) / 1000, r }))
      .filter((p) => !Number.isNaN(p.t))
      .sort((a, b) => a.t - b.t);
    const data: uPlot.AlignedData = [
      points.map((p) => p.t),
      ...plan.series.map((s) => points.map((p) => (typeof p.r[s] === 'number' ? (p.r[s] as number) : null))),
    ];
    const width = Math.max(320, holder.current.clientWidth);
    const plot = new uPlot(
      {
        width,
        height: 260,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true } },
        legend: { live: false },
        axes: [
          { stroke: '#475569', grid: { stroke: '#e2e8f0' }, values: (_u, splits) => utcTicks(splits) },
          { stroke: '#475569', grid: { stroke: '#e2e8f0' } },
        ],
        series: [
          { label: `${plan.x} (UTC)` },
          ...plan.series.map((s, i) => ({ label: s, stroke: COLOURS[i % COLOURS.length], width: 2, points: { show: points.length < 60 } })),
        ],
      },
      data,
      holder.current,
    );
    const onResize = () => holder.current && plot.setSize({ width: Math.max(320, holder.current.clientWidth), height: 260 });
    addEventListener('resize', onResize);
    return () => {
      removeEventListener('resize', onResize);
      plot.destroy();
    };
  }, [rows]);
  if (!plan) return null;
  return <div class="chart" ref={holder} data-x={plan.x} data-series={plan.series.join(',')} />;
}

/** Tick labels in UTC, 24-hour: the date (MM-DD) where a tick starts a day, else the time. */
function utcTicks(splits: number[]): string[] {
  const step = splits.length > 1 ? splits[1]! - splits[0]! : 0;
  return splits.map((s) => {
    const iso = new Date(s * 1000).toISOString();
    if (step >= 86_400 || iso.slice(11, 16) === '00:00') return iso.slice(5, 10);
    return iso.slice(11, step < 60 ? 19 : 16);
  });
}
