// Bundle entry `a2ui-vendor/chart` (scripts/build-vendor.mjs): Chart.js with only what the web
// client's chart component draws (bar, line and pie charts, their scales and tooltips)
// registered, so esbuild leaves the rest of Chart.js out. The legend and the title are HTML
// next to the canvas (a2ui/static/a2ui/client/chart.js), not drawn by Chart.js.
import {
  ArcElement, BarController, BarElement, CategoryScale, Chart, Filler, LinearScale,
  LineController, LineElement, PieController, PointElement, Tooltip,
} from 'chart.js';

Chart.register(
  ArcElement, BarController, BarElement, CategoryScale, Filler, LinearScale, LineController,
  LineElement, PieController, PointElement, Tooltip,
);

export { Chart };
