import { HeatmapChart as Heatmap } from 'echarts/charts';
import { VisualMapComponent } from 'echarts/components';
import { useMemo } from 'react';
import { Chart, echarts } from './chart';

echarts.use([Heatmap, VisualMapComponent]);

/** Percentages (0-100) per bucket (x) and row (y), e.g. uptime by exchange. */
export function HeatmapChart({ label, buckets, rows, cells }: { label: string; buckets: string[]; rows: string[]; cells: [number, number, number | null][] }) {
  const option = useMemo(
    () => ({
      grid: { left: 8, right: 16, top: 16, bottom: 72, containLabel: true },
      tooltip: { position: 'top' },
      xAxis: { type: 'category', data: buckets, splitArea: { show: true } },
      yAxis: { type: 'category', data: rows, splitArea: { show: true } },
      visualMap: { min: 0, max: 100, calculable: false, orient: 'horizontal', left: 'center', bottom: 0, text: ['100 %', '0 %'], inRange: { color: ['#b2182b', '#f7f7a1', '#1a9850'] } },
      series: [{ type: 'heatmap', data: cells.map(([x, y, v]) => [x, y, v === null ? '-' : Math.round(v * 100) / 100]), label: { show: buckets.length <= 12 } }],
    }),
    [buckets, rows, cells],
  );
  return <Chart option={option} label={label} />;
}
