// A thin React component over one ECharts instance. Each chart kind registers only what it
// draws (charts/line.tsx, charts/heatmap.tsx, charts/bar.tsx), so unused kinds never ship.
// Tooltips are drawn on the canvas (richText): HTML tooltips carry inline styles, which the
// page's Content-Security-Policy refuses.
import type { EChartsCoreOption } from 'echarts/core';
import * as echarts from 'echarts/core';
import { CanvasRenderer } from 'echarts/renderers';
import { AriaComponent, GridComponent, LegendComponent, TooltipComponent } from 'echarts/components';
import { useEffect, useRef } from 'react';

echarts.use([CanvasRenderer, GridComponent, TooltipComponent, LegendComponent, AriaComponent]);

export { echarts };
export type { EChartsCoreOption };

export function Chart({ option, label, height = 280 }: { option: EChartsCoreOption; label: string; height?: number }) {
  const el = useRef<HTMLDivElement>(null);
  const chart = useRef<echarts.ECharts | null>(null);
  useEffect(() => {
    const c = echarts.init(el.current!, undefined, { renderer: 'canvas' });
    chart.current = c;
    const ro = new ResizeObserver(() => c.resize());
    ro.observe(el.current!);
    return () => {
      ro.disconnect();
      c.dispose();
      chart.current = null;
    };
  }, []);
  useEffect(() => {
    chart.current?.setOption(
      {
        animation: false,
        aria: { enabled: true, label: { description: label } },
        textStyle: { fontFamily: 'system-ui, sans-serif' },
        ...option,
        tooltip: { renderMode: 'richText', ...((option.tooltip as object) ?? {}) },
      },
      { notMerge: true },
    );
  }, [option, label]);
  return <div ref={el} className="chart" role="img" aria-label={label} data-height={height} />;
}
