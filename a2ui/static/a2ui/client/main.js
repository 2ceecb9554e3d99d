// Entry point: one client per [data-a2ui-client] container on the page.
import { App } from './app.js';

for (const root of document.querySelectorAll('[data-a2ui-client]')) {
  if (root.a2uiApp) continue;
  const app = new App(root);
  root.a2uiApp = app;
  app.start();
}
