import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatInteger, formatMoney } from '../format.js';
import type { Bucket } from '../types.js';

const COLORS = { clicks: '#1d4ed8', conversions: '#b45309', revenue: '#047857' };

function options(width: number, currency: string): uPlot.Options {
  return {
    width,
    height: 260,
    // Buckets are the store's local days, given as dates: drawn as such (UTC), whatever the browser's zone.
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: {
      x: { time: true },
      count: { range: (_u, _min, max) => [0, Math.max(1, max)] },
      money: { range: (_u, _min, max) => [0, Math.max(1, max)] },
    },
    axes: [
      {},
      // Counts are whole: no 0.5 clicks on the axis.
      {
        scale: 'count',
        incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 2e4, 5e4, 1e5, 1e6, 1e7],
        values: (_u, ticks) => ticks.map((t) => formatInteger(t)),
      },
      {
        scale: 'money',
        side: 1,
        grid: { show: false },
        values: (_u, ticks) => ticks.map((t) => formatMoney(t, currency)),
        size: 70,
      },
    ],
    series: [
      { label: 'Day' },
      {
        label: 'Clicks',
        scale: 'count',
        stroke: COLORS.clicks,
        width: 2,
        value: (_u, v) => (v == null ? '—' : formatInteger(v)),
      },
      {
        label: 'Conversions',
        scale: 'count',
        stroke: COLORS.conversions,
        width: 2,
        dash: [6, 3],
        value: (_u, v) => (v == null ? '—' : formatInteger(v)),
      },
      {
        label: 'Revenue',
        scale: 'money',
        stroke: COLORS.revenue,
        width: 2,
        value: (_u, v) => (v == null ? '—' : formatMoney(v, currency)),
      },
    ],
  };
}

function dataOf(buckets: Bucket[]): uPlot.AlignedData {
  return [
    buckets.map((b) => Date.parse(`${b.label}T00:00:00Z`) / 1000),
    buckets.map((b) => b.clicks),
    buckets.map((b) => b.conversions),
    buckets.map((b) => b.revenue),
  ];
}

/** One sentence for screen readers: what the chart shows, and its totals. */
export function describeChart(buckets: Bucket[], currency: string): string {
  const first = buckets[0]?.label;
  const last = buckets[buckets.length - 1]?.label;
  const sum = (pick: (b: Bucket) => number) => buckets.reduce((total, b) => total + pick(b), 0);
  return `Daily clicks, conversions and revenue from ${first} to ${last}: ${formatInteger(sum((b) => b.clicks))} clicks, ${formatInteger(
    sum((b) => b.conversions),
  )} conversions, ${formatMoney(
    sum((b) => b.revenue),
    currency,
  )} revenue`;
}

/** The daily chart of the Overview: clicks and conversions (left axis), revenue (right axis). */
export function DailyChart({ buckets, currency }: { buckets: Bucket[]; currency: string }) {
  const container = useRef<HTMLDivElement>(null);

  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const chart = new uPlot(options(element.clientWidth || 300, currency), dataOf(buckets), element);
    // The canvas is the image; uPlot's legend repeats the values hovered, as text.
    const canvas = chart.root.querySelector('canvas');
    canvas?.setAttribute('role', 'img');
    canvas?.setAttribute('aria-label', describeChart(buckets, currency));
    const resize = new ResizeObserver(() => {
      if (element.clientWidth > 0 && element.clientWidth !== chart.width)
        chart.setSize({ width: element.clientWidth, height: 260 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [buckets, currency]);

  return <div class="chart" ref={container} />;
}
