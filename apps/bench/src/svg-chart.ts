import type { Chart } from './scenario.ts';

const W = 640;
const H = 360;
const PAD = { left: 64, right: 16, top: 36, bottom: 48 };
const COLORS = ['#2563eb', '#ea580c', '#16a34a', '#9333ea', '#dc2626', '#0891b2', '#ca8a04'];

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const tick = (v: number) => (Math.abs(v) >= 1000 ? v.toFixed(0) : Number(v.toPrecision(3)).toString());

/** A line chart as a standalone SVG: axes with five ticks, one polyline per series, a legend. */
export function renderLineChart(chart: Chart): string {
  const points = chart.series.flatMap((s) => s.points);
  const xs = points.map((p) => p.x);
  const ys = points.map((p) => p.y);
  const [x0, x1] = [Math.min(...xs, 0), Math.max(...xs, 1)];
  const [y0, y1] = [0, Math.max(...ys, 1) * 1.1];
  const px = (x: number) => PAD.left + ((x - x0) / (x1 - x0 || 1)) * (W - PAD.left - PAD.right);
  const py = (y: number) => H - PAD.bottom - ((y - y0) / (y1 - y0 || 1)) * (H - PAD.top - PAD.bottom);
  const ticks = [0, 0.25, 0.5, 0.75, 1];
  const grid = ticks.map((t) => {
    const y = y0 + t * (y1 - y0);
    const line = `<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${py(y)}" y2="${py(y)}" stroke="#e5e7eb"/>`;
    return `${line}<text x="${PAD.left - 6}" y="${py(y) + 4}" text-anchor="end">${tick(y)}</text>`;
  });
  const xTicks = ticks.map((t) => {
    const x = x0 + t * (x1 - x0);
    return `<text x="${px(x)}" y="${H - PAD.bottom + 16}" text-anchor="middle">${tick(x)}</text>`;
  });
  const lines = chart.series.map((s, i) => {
    const color = COLORS[i % COLORS.length];
    const path = s.points.map((p) => `${px(p.x).toFixed(1)},${py(p.y).toFixed(1)}`).join(' ');
    const dots = s.points.map((p) => `<circle cx="${px(p.x).toFixed(1)}" cy="${py(p.y).toFixed(1)}" r="3" fill="${color}"/>`).join('');
    const [lx, ly] = [PAD.left + 8 + (i % 3) * 190, 8 + Math.floor(i / 3) * 14];
    const legend = `<rect x="${lx}" y="${ly}" width="10" height="3" fill="${color}"/><text x="${lx + 14}" y="${ly + 5}">${esc(s.name)}</text>`;
    return `<polyline fill="none" stroke="${color}" stroke-width="2" points="${path}"/>${dots}${legend}`;
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="11" fill="#374151">
<rect width="${W}" height="${H}" fill="#fff"/>
<text x="${W / 2}" y="${H - 8}" text-anchor="middle">${esc(chart.xLabel)}</text>
<text transform="translate(14 ${H / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>
${grid.join('\n')}
${xTicks.join('\n')}
${lines.join('\n')}
</svg>
`;
}
