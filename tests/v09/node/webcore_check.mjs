// Feeds A2UI v0.9 server messages to the official @a2ui/web_core MessageProcessor with its
// basic catalog. Usage: node webcore_check.mjs < batches.json, where the input is
// [[message, ...], ...] (each inner list one processMessages call). Prints one JSON line:
// {"ok": true, "surfaces": {id: [component ids]}} or {"ok": false, "index": i, "error": "..."}.
import { MessageProcessor } from '@a2ui/web_core/v0_9';
import { basicCatalog } from '@a2ui/web_core/v0_9/basic_catalog';

let input = '';
for await (const chunk of process.stdin) input += chunk;
const batches = JSON.parse(input);
const processor = new MessageProcessor([basicCatalog], () => {});
for (let i = 0; i < batches.length; i++) {
  try {
    processor.processMessages(batches[i]);
  } catch (err) {
    console.log(JSON.stringify({ ok: false, index: i, error: String(err && err.message || err) }));
    process.exit(1);
  }
}
const surfaces = {};
for (const [id, surface] of processor.model.surfacesMap) {
  surfaces[id] = [...surface.componentsModel.entries].map(([cid]) => cid);
}
console.log(JSON.stringify({ ok: true, surfaces }));
