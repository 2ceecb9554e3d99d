// A small MCP host page's script for tests/browser/test_mcp_host.py, bundled by esbuild at test
// time (never committed as a bundle). It connects to /mcp with the official TypeScript client
// (@modelcontextprotocol/client, Streamable HTTP, `Authorization: Bearer <stream_mcp token>`),
// reads a ui:// resource and shows it in a sandboxed iframe, the two ways hosts do:
//
//  * mountMcpUi: seed 002's postMessage forms through a plain sandbox="allow-scripts" iframe
//    (MCP_UI_ACTION CALL_TOOL, or the lowercase MCP-UI {type: "tool"}) become an MCP tools/call,
//    answered to the iframe with TOOL_RESULT;
//  * mountApp: an MCP App (text/html;profile=mcp-app) through @modelcontextprotocol/ext-apps'
//    AppBridge, which forwards the app's tools/call to the server through the same client;
//  * runTool: as an MCP Apps host (Claude, ChatGPT, VS Code) shows an app: it calls a tool
//    (tools/call), finds the tool's app in its _meta.ui.resourceUri (ext-apps'
//    getToolUiResourceUri), reads it and renders it through AppBridge, sends it the tool's
//    input and result, and forwards the app's tools/call only for tools whose
//    _meta.ui.visibility includes "app" (SEP-1865); app-only tools are left out of what the
//    model is offered.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

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

let lastAppCall = null;
let appClient = null;

function appCallable(tool) {
  const visibility = tool && tool._meta && tool._meta.ui && tool._meta.ui.visibility;
  return !Array.isArray(visibility) || visibility.includes("app");
}

async function runTool(token, name, args) {
  const client = await connect(token, { extensions: { [APPS]: { mimeTypes: [APP_MIME] } } });
  appClient = client;
  const { tools } = await client.listTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  const uri = getToolUiResourceUri(byName.get(name));
  const result = await client.callTool({ name, arguments: args });
  log.push({ toolCall: name, isError: Boolean(result.isError) });
  const read = await client.readResource({ uri });
  const content = read.contents[0];
  const iframe = frame();
  const bridge = new AppBridge(null, { name: "a2ui-test-host", version: "1.0.0" },
                               { openLinks: {}, serverTools: {}, logging: {} });
  bridge.oncalltool = async (params) => {
    if (!appCallable(byName.get(params.name))) {
      log.push({ refusedAppCall: params.name });
      throw new Error(`Tool ${params.name} is not callable by the app`);
    }
    lastAppCall = params;
    const answer = await client.callTool(params);
    log.push({ appCall: params.name, arguments: params.arguments, result: answer });
    return answer;
  };
  bridge.onopenlink = async ({ url }) => { log.push({ openLink: url }); return {}; };
  bridge.oninitialized = async () => {
    log.push({ appInitialized: bridge.getAppVersion() });
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  iframe.srcdoc = content.text;
  return {
    uri, mimeType: content.mimeType, meta: content._meta || null,
    toolMeta: byName.get(name)._meta,
    modelTools: tools.filter((t) => !isToolVisibilityAppOnly(t)).map((t) => t.name),
    appOnly: tools.filter((t) => isToolVisibilityAppOnly(t)).map((t) => t.name),
    result: { isError: Boolean(result.isError), structuredContent: result.structuredContent },
  };
}

// The host repeats the app's last tools/call (a retry after a lost answer, say).
async function replayLastAppCall() {
  const result = await appClient.callTool(lastAppCall);
  return { name: lastAppCall.name, isError: Boolean(result.isError),
           structuredContent: result.structuredContent };
}

window.mcpHost = { mountMcpUi, mountApp, runTool, replayLastAppCall };
