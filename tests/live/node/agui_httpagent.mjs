// Drives POST /api/v4/agui/run with @ag-ui/client's HttpAgent (the reference AG-UI 1.0 client,
// which validates every event and their order: runAgent() rejects on a violation).
// Usage: node agui_httpagent.mjs <url> <stream_agui token>
// Run 1 asks the agent something; the agent answers with an interrupt. Run 2 resumes it; the
// agent finishes with a result. Prints one JSON line: what HttpAgent saw.
import { HttpAgent } from "@ag-ui/client";

const [url, token] = process.argv.slice(2);
const agent = new HttpAgent({ url, headers: { Authorization: `Bearer ${token}` } });
const out = { runs: [] };

async function run(params) {
  const types = [];
  const result = await agent.runAgent(params, {
    onEvent({ event }) { types.push(event.type); },
  });
  out.runs.push({
    types,
    result: result.result ?? null,
    newMessages: result.newMessages.map((m) => ({ role: m.role, content: m.content ?? null })),
    pendingInterrupts: agent.pendingInterrupts.map((i) => ({ id: i.id, reason: i.reason })),
  });
}

try {
  agent.messages.push({ id: "m1", role: "user", content: "What is my name?" });
  await run({ runId: "node-run-1" });
  const [pending] = agent.pendingInterrupts;
  await run({
    runId: "node-run-2",
    resume: [{ interruptId: pending.id, status: "resolved", payload: "Ada" }],
  });
  out.threadId = agent.threadId;
  out.ok = true;
} catch (error) {
  out.ok = false;
  out.error = String(error && error.stack ? error.stack : error);
}
console.log(JSON.stringify(out));
