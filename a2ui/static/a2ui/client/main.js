// Entry point: one client per [data-a2ui-client] container on the page. The clients start once
// the document is parsed, so that a host project's module scripts anywhere in the page have
// registered their components (api.js) first; one registered later is drawn when it comes.
import './api.js';
import { App } from './app.js';

function start() {
  for (const root of document.querySelectorAll('[data-a2ui-client]')) {
    if (root.a2uiApp) continue;
    const app = new App(root);
    root.a2uiApp = app;
    app.start();
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', start, { once: true });
else start();
