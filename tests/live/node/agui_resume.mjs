// Drives POST /api/v4/agui/run with @ag-ui/client's HttpAgent (which validates every event and
// their order: runAgent() rejects on a violation) through the cases of docs/protocol-agui.md,
// "Resuming a run" and "With your host". One JSON line per event as it arrives
// ({"event": ...}), then one last line: what HttpAgent saw.
// Usage: node agui_resume.mjs <mode> <url> <stream_agui token> <threadId> [<other url>]
// (with <other url>, the reloaded page and the cancelling run go to the other process)
//   cut:    one run, with resumableFetch (agui_resumable_fetch.mjs): the test cuts the
//           connection mid-run and points it at the other process; the run goes on.
//   reload: a run that ends at an interrupt; then a new HttpAgent on the same thread (a
//           reloaded page, knowing nothing of it) starts a run, which shows the interrupt
//           again; it resumes it.
//   cancel: a run that ends at an interrupt, the run that cancels it, then a plain run.
import { HttpAgent } from "@ag-ui/client";
import { resumableFetch } from "./agui_resumable_fetch.mjs";

const [mode, url, token, threadId, otherUrl = url] = process.argv.slice(2);
const headers = { Authorization: `Bearer ${token}` };
const out = { runs: [], requests: [] };

function record(url, init = {}) {  // what went over the wire: each request's Last-Event-ID
  out.requests.push(new Headers(init.headers).get("Last-Event-ID"));
  return fetch(url, init);
}

async function run(agent, params) {
  const events = [];
  const entry = { runId: params.runId, events };
  out.runs.push(entry);
  const result = await agent.runAgent(params, {
    onEvent({ event }) {
      events.push(event);
      console.log(JSON.stringify({ event }));
    },
  });
  entry.result = result.result ?? null;
  entry.newMessages = result.newMessages.map((m) => ({ role: m.role, content: m.content }));
  entry.pendingInterrupts = agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason }));
  return entry;
}

try {
  if (mode === "cut") {
    const agent = new HttpAgent({ url, headers, threadId,
                                  fetch: resumableFetch({ fetch: record, delayMs: 100,
                                                          retries: 100 }) });
    agent.messages.push({ id: "m1", role: "user", content: "Count for me" });
    await run(agent, { runId: `${threadId}-run` });
  } else if (mode === "reload") {
    const page = new HttpAgent({ url, headers, threadId });
    page.messages.push({ id: "m1", role: "user", content: "What is my name?" });
    await run(page, { runId: `${threadId}-1` });
    const reloaded = new HttpAgent({ url: otherUrl, headers, threadId });  // knows nothing
    await run(reloaded, { runId: `${threadId}-2` });
    const [pending] = reloaded.pendingInterrupts;
    await run(reloaded, { runId: `${threadId}-3`, resume: [
      { interruptId: pending.id, status: "resolved", payload: "Ada" }] });
  } else if (mode === "cancel") {
    const agent = new HttpAgent({ url, headers, threadId });
    agent.messages.push({ id: "m1", role: "user", content: "What is my name?" });
    await run(agent, { runId: `${threadId}-1` });
    const [pending] = agent.pendingInterrupts;
    agent.url = otherUrl;
    await run(agent, { runId: `${threadId}-2`, resume: [
      { interruptId: pending.id, status: "cancelled" }] });
    agent.messages.push({ id: "m2", role: "user", content: "Hello again" });
    await run(agent, { runId: `${threadId}-3` });
  }
  out.ok = true;
} catch (error) {
  out.ok = false;
  out.error = String(error && error.stack ? error.stack : error);
}
console.log(JSON.stringify({ done: out }));
