// Two MCP-UI hosts for tests/browser/test_mcp_host.py, bundled by esbuild at test time (never
// committed as a bundle), each as an application of that @mcp-ui/client major writes one: the
// official MCP TypeScript SDK's Client (@modelcontextprotocol/sdk, the one @mcp-ui/client depends
// on; Streamable HTTP, `Authorization: Bearer <stream_mcp token>`) and React.
//
//  * mountMcpUi5: @mcp-ui/client 5.x's UIResourceRenderer shows a ui:// text/html resource; its
//    onUIAction is the standard handler (a "tool" action becomes client.callTool, whose result
//    or error the renderer answers to the frame with ui-message-response);
//  * mountMcpUi7: @mcp-ui/client 7.x's AppRenderer shows the MCP Apps variant
//    (text/html;profile=mcp-app) through a sandbox proxy page on another origin; the renderer
//    forwards the app's tools/call to the server through the same client.
import { createElement } from "react";
import { createRoot } from "react-dom/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UIResourceRenderer } from "mcp-ui-client-5";
import { AppRenderer, UI_EXTENSION_CAPABILITIES } from "mcp-ui-client-7";

const log = (window.hostLog = []);

async function connect(token, capabilities) {
  const client = new Client({ name: "a2ui-test-mcp-ui-host", version: "1.0.0" }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL("/mcp", location.href), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  }));
  return client;
}

function root(id) {
  const element = document.createElement("div");
  element.id = id;
  document.body.appendChild(element);
  return createRoot(element);
}

async function mountMcpUi5(token, uri, frameId = "ui") {
  const client = await connect(token, {});
  const { contents: [resource] } = await client.readResource({ uri });
  // The standard onUIAction of an @mcp-ui/client 5.x host (docs/protocol-mcp.md, "With your
  // host"); the log lines are the test's.
  const onUIAction = async (action) => {
    log.push({ action });
    switch (action.type) {
      case "tool":
        try {
          const result = await client.callTool({
            name: action.payload.toolName, arguments: action.payload.params });
          log.push({ toolResult: result });
          return result;  // the frame gets it as ui-message-response's payload.response
        } catch (error) {
          log.push({ toolError: String(error.message) });
          throw error;  // ... and this as payload.error
        }
      case "link":
        log.push({ openLink: action.payload.url });  // a host: window.open(url, "_blank", "noopener")
        return { opened: true };
      default:
        return undefined;  // prompt, intent, notify: this host has no chat to hand them to
    }
  };
  root(`root-${frameId}`).render(createElement(UIResourceRenderer, {
    resource, onUIAction,
    htmlProps: { autoResizeIframe: { height: true }, iframeProps: { id: frameId } },
  }));
  return { mimeType: resource.mimeType };
}

async function mountMcpUi7(token, uri, sandboxUrl) {
  const client = await connect(token, { extensions: UI_EXTENSION_CAPABILITIES });
  root("root").render(createElement(AppRenderer, {
    client,
    toolName: "request_input",
    toolResourceUri: uri,
    sandbox: { url: new URL(sandboxUrl) },
    onOpenLink: async ({ url }) => { log.push({ openLink: url }); return {}; },
    onError: (error) => log.push({ error: String(error && error.message) }),
  }));
  return { mounted: uri };
}

window.mcpUiHost = { mountMcpUi5, mountMcpUi7 };
