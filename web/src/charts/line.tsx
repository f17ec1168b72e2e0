import { LineChart as Line } from 'echarts/charts';
import { DataZoomComponent } from 'echarts/components';
import { useMemo } from 'react';
import { Chart, echarts } from './chart';

echarts.use([Line, DataZoomComponent]);

export interface Series {
  name: string;
  points: [number, number | null][];
  /** A second axis on the right (e.g. price beside depth). */
  right?: boolean;
  dashed?: boolean;
}

/** Lines over time: x in epoch ms, one series per name. */
export function LineChart({ label, series, unit, rightUnit }: { label: string; series: Series[]; unit?: string; rightUnit?: string }) {
  const option = useMemo(
    () => ({
      grid: { left: 64, right: rightUnit ? 64 : 16, top: 40, bottom: 48, containLabel: false },
      legend: { type: 'scroll', top: 0 },
      tooltip: { trigger: 'axis' },
      xAxis: { type: 'time' },
      yAxis: [
        { type: 'value', name: unit, scale: true },
        ...(rightUnit ? [{ type: 'value', name: rightUnit, scale: true, splitLine: { show: false } }] : []),
      ],
      dataZoom: [{ type: 'inside' }],
      series: series.map((s) => ({
        type: 'line',
        name: s.name,
        data: s.points,
        showSymbol: s.points.length < 40,
        connectNulls: false,
        yAxisIndex: s.right ? 1 : 0,
        lineStyle: s.dashed ? { type: 'dashed' } : undefined,
      })),
    }),
    [series, unit, rightUnit],
  );
  return <Chart option={option} label={label} />;
}
