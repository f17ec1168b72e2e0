import { BarChart as Bar } from 'echarts/charts';
import { useMemo } from 'react';
import { Chart, echarts } from './chart';

echarts.use([Bar]);

/** Bars per category, one series per name (stacked when asked). */
export function BarChart({ label, categories, series, unit, stacked }: { label: string; categories: string[]; series: { name: string; values: (number | null)[] }[]; unit?: string; stacked?: boolean }) {
  const option = useMemo(
    () => ({
      grid: { left: 64, right: 16, top: 40, bottom: 48 },
      legend: { type: 'scroll', top: 0 },
      tooltip: { trigger: 'axis' },
      xAxis: { type: 'category', data: categories },
      yAxis: { type: 'value', name: unit },
      series: series.map((s) => ({
        type: 'bar',
        name: s.name,
        stack: stacked ? 'all' : undefined,
        data: s.values,
      })),
    }),
    [categories, series, unit, stacked],
  );
  return <Chart option={option} label={label} />;
}
