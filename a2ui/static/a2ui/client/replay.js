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

// Frozen at that moment: a confirm's countdown shows its time and does not tick (the frame
// shows one moment, not a running clock).
window.setInterval = () => 0;

const root = document.querySelector('[data-a2ui-replay]');
const source = document.getElementById('a2ui-replay-messages');
const messages = source ? JSON.parse(source.textContent) : [];
const app = new App(root);
app.connection = NO_CONNECTION;
// Not a connection's state ("Disconnected", a Reconnect button): the frame's neutral
// "Replay · moment N", whatever the messages do.
app.showState = () => {};
app.status.dataset.state = 'replay';
app.statusText.textContent = root.dataset.replayLabel || 'Replay';
app.reconnectBtn.hidden = true;
root.dataset.connection = 'replay';
app.sessionStarted({ resumed: false }); // an empty screen, as a new session's
for (const message of Array.isArray(messages) ? messages : []) app.dispatch(message);
root.dataset.replayed = String(messages.length);
