import { LineChart as Line } from 'echarts/charts';
import { DataZoomComponent } from 'echarts/components';
import { useMemo } from 'react';
import { Chart, echarts } from './chart';
import { zoneOffsetMs } from '../ui/format';

echarts.use([Line, DataZoomComponent]);

export interface Series {
  name: string;
  points: [number, number | null][];
  /** A second axis on the right (e.g. price beside depth). */
  right?: boolean;
  dashed?: boolean;
}

const axisNumber = new Intl.NumberFormat('en-US', { maximumSignificantDigits: 6 });

/**
 * Lines over time: x in epoch ms, one series per name, the time axis in `zone` (UTC by
 * default) as the view's tables and other charts show it, whatever the browser's zone.
 * ECharts draws a time axis in the browser's zone or in UTC only: the points are moved by
 * the zone's offset at each instant and drawn in UTC.
 */
export function LineChart({ label, series, unit, rightUnit, zone = 'UTC' }: { label: string; series: Series[]; unit?: string; rightUnit?: string; zone?: string }) {
  const option = useMemo(
    () => ({
      useUTC: true,
      grid: { left: 64, right: rightUnit ? 64 : 16, top: 48, bottom: 48, containLabel: false },
      legend: { type: 'scroll', top: 0 },
      tooltip: { trigger: 'axis' },
      xAxis: { type: 'time', min: 'dataMin', max: 'dataMax', axisLabel: { hideOverlap: true } },
      yAxis: [
        { type: 'value', name: unit, scale: true, axisLabel: { formatter: (v: number) => axisNumber.format(v) } },
        ...(rightUnit ? [{ type: 'value', name: rightUnit, scale: true, splitLine: { show: false }, axisLabel: { formatter: (v: number) => axisNumber.format(v) } }] : []),
      ],
      dataZoom: [{ type: 'inside' }],
      series: series.map((s) => ({
        type: 'line',
        name: s.name,
        data: zone === 'UTC' ? s.points : s.points.map(([t, v]) => [t + zoneOffsetMs(zone, t), v]),
        showSymbol: s.points.length < 40,
        connectNulls: false,
        yAxisIndex: s.right ? 1 : 0,
        lineStyle: s.dashed ? { type: 'dashed' } : undefined,
      })),
    }),
    [series, unit, rightUnit, zone],
  );
  return <Chart option={option} label={label} />;
}
