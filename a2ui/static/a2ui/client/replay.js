// The admin's replay frame: the client's own renderer (App) fed the notifications that draw one
// moment of a session (a2ui.jsonrpc.replay.messages), with no connection: nothing is sent, nothing
// is received, the frame's CSP allows no connection at all.
import { App } from './app.js';

const NO_CONNECTION = {
  start() {},
  stop() {},
  notify() { return false; },
  request() { return Promise.reject(new Error('replay: no connection')); },
};

const root = document.querySelector('[data-a2ui-replay]');
const source = document.getElementById('a2ui-replay-messages');
const messages = source ? JSON.parse(source.textContent) : [];
const app = new App(root);
app.connection = NO_CONNECTION;
app.showState('closed', 'replay');
app.sessionStarted({ resumed: false }); // an empty screen, as a new session's
for (const message of Array.isArray(messages) ? messages : []) app.dispatch(message);
root.dataset.replayed = String(messages.length);
