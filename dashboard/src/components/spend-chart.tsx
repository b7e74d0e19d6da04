import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatMoney, subtractMoney } from '../format.js';
import type { Bucket } from '../types.js';

/** A day of the Channels chart: its ad spend and its net revenue (revenue − refunds), exact. */
export interface SpendDay {
  date: string;
  spend: number;
  netRevenue: number;
}

/** Day buckets of GET /v1/analytics/timeseries (which carry `adSpend`) as the chart's days. */
export function spendDays(buckets: Array<Bucket & { adSpend?: number }>, currency: string): SpendDay[] {
  return buckets.map((b) => ({
    date: b.label,
    spend: b.adSpend ?? 0,
    netRevenue: Number(subtractMoney(b.revenue, b.refunds, currency)),
  }));
}

function options(width: number, currency: string): uPlot.Options {
  const money = (_u: uPlot, v: number | null) => (v == null ? '—' : formatMoney(v, currency));
  return {
    width,
    height: 240,
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    scales: { x: { time: true }, money: { range: (_u, min, max) => [Math.min(0, min), Math.max(1, max)] } },
    axes: [{}, { scale: 'money', values: (_u, ticks) => ticks.map((t) => formatMoney(t, currency)), size: 80 }],
    series: [
      { label: 'Day' },
      { label: 'Ad spend', scale: 'money', stroke: '#b91c1c', width: 2, value: money },
      { label: 'Net revenue', scale: 'money', stroke: '#047857', width: 2, dash: [6, 3], value: money },
    ],
  };
}

/** One sentence for screen readers: the range and both totals. */
export function describeSpendChart(days: SpendDay[], currency: string): string {
  const cents = (pick: (d: SpendDay) => number) => days.reduce((total, d) => total + Math.round(pick(d) * 100), 0) / 100;
  return `Ad spend and net revenue per day from ${days[0]?.date} to ${days[days.length - 1]?.date}: ${formatMoney(
    cents((d) => d.spend),
    currency,
  )} spent, ${formatMoney(
    cents((d) => d.netRevenue),
    currency,
  )} net revenue`;
}

/** The Channels page's chart: what the ads cost each day against what the store kept (api.md §11). */
export function SpendChart({ days, currency }: { days: SpendDay[]; currency: string }) {
  const container = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = container.current;
    if (!element) return;
    const data: uPlot.AlignedData = [
      days.map((d) => Date.parse(`${d.date}T00:00:00Z`) / 1000),
      days.map((d) => d.spend),
      days.map((d) => d.netRevenue),
    ];
    const chart = new uPlot(options(element.clientWidth || 300, currency), data, element);
    const canvas = chart.root.querySelector('canvas');
    canvas?.setAttribute('role', 'img');
    canvas?.setAttribute('aria-label', describeSpendChart(days, currency));
    const resize = new ResizeObserver(() => {
      if (element.clientWidth > 0 && element.clientWidth !== chart.width)
        chart.setSize({ width: element.clientWidth, height: 240 });
    });
    resize.observe(element);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [days, currency]);
  return <div class="chart" ref={container} />;
}
