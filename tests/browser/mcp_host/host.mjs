// A small MCP host page's script for tests/browser/test_mcp_host.py, bundled by esbuild at test
// time (never committed as a bundle). It connects to /mcp with the official TypeScript client
// (@modelcontextprotocol/client, Streamable HTTP, `Authorization: Bearer <stream_mcp token>`),
// reads a ui:// resource and shows it in a sandboxed iframe, the two ways hosts do:
//
//  * mountMcpUi: seed 002's postMessage forms through a plain sandbox="allow-scripts" iframe
//    (MCP_UI_ACTION CALL_TOOL, or the lowercase MCP-UI {type: "tool"}) become an MCP tools/call,
//    answered to the iframe with TOOL_RESULT;
//  * mountApp: an MCP App (text/html;profile=mcp-app) through @modelcontextprotocol/ext-apps'
//    AppBridge, which forwards the app's tools/call to the server through the same client.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { AppBridge, PostMessageTransport } from "@modelcontextprotocol/ext-apps/app-bridge";

const APPS = "io.modelcontextprotocol/ui";
const APP_MIME = "text/html;profile=mcp-app";
const log = (window.hostLog = []);

async function connect(token, capabilities) {
  const client = new Client({ name: "a2ui-test-host", version: "1.0.0" }, { capabilities });
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", location.href), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  return client;
}

function frame() {
  const iframe = document.createElement("iframe");
  iframe.id = "ui";
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.style.width = "600px";
  iframe.style.height = "400px";
  document.body.appendChild(iframe);
  return iframe;
}

async function mountMcpUi(token, uri) {
  const client = await connect(token, {});
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  log.push({ read: uri, mimeType: content.mimeType });
  const iframe = frame();
  window.addEventListener("message", async (event) => {
    if (event.source !== iframe.contentWindow) return;
    const m = event.data || {};
    log.push({ message: m });
    let call = null;
    if (m.type === "MCP_UI_ACTION" && m.action && m.action.type === "CALL_TOOL") {
      call = { name: m.action.toolName, args: m.action.args, callbackId: m.action.callbackId };
    } else if (m.type === "tool" && m.payload) {
      call = { name: m.payload.toolName, args: m.payload.params, callbackId: m.messageId };
    }
    if (!call) return;
    let reply;
    try {
      const result = await client.callTool({ name: call.name, arguments: call.args });
      reply = { type: "TOOL_RESULT", callbackId: call.callbackId, result };
    } catch (error) {
      reply = { type: "TOOL_RESULT", callbackId: call.callbackId,
                error: { code: error.code, message: String(error.message) } };
    }
    log.push({ toolResult: reply });
    iframe.contentWindow.postMessage(reply, "*");
  });
  iframe.srcdoc = content.text;
  return { mimeType: content.mimeType };
}

async function mountApp(token, uri) {
  const client = await connect(token, { extensions: { [APPS]: { mimeTypes: [APP_MIME] } } });
  const listed = await client.listResources();
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  const iframe = frame();
  const bridge = new AppBridge(client, { name: "a2ui-test-host", version: "1.0.0" },
                               { openLinks: {}, serverTools: {}, logging: {} });
  bridge.oninitialized = () => log.push({ appInitialized: bridge.getAppVersion() });
  bridge.onopenlink = async ({ url }) => { log.push({ openLink: url }); return {}; };
  // Connect before the document loads (its ui/initialize is its first message).
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = content.text;
  return { mimeType: content.mimeType, meta: content._meta || null,
           listed: listed.resources.map((r) => [r.uri, r.mimeType]) };
}

window.mcpHost = { mountMcpUi, mountApp };
