// A fetch for @ag-ui/client's HttpAgent that resumes a run whose stream broke off: it keeps
// the id of the last whole event and, when the stream ends before RUN_FINISHED / RUN_ERROR,
// sends the same request again with Last-Event-ID. The server answers with the run's events
// after that one. Events reach HttpAgent whole, in order and once.
export function resumableFetch({ fetch: send = globalThis.fetch, retries = 10,
                                 delayMs = 500 } = {}) {
  return async (url, init = {}) => {
    const first = await send(url, init);
    const type = first.headers.get("content-type") || "";
    if (!first.ok || !first.body || !type.startsWith("text/event-stream")) return first;
    let reader = null;
    let stopped = false;
    const body = new ReadableStream({
      async start(controller) {
        const encoder = new TextEncoder();
        let response = first, lastId = null, finished = false, failures = 0;
        for (;;) {
          const decoder = new TextDecoder();  // one per response: a cut splits no character
          let buffer = "";
          try {
            reader = response.body.getReader();
            for (;;) {
              const { done, value } = await reader.read();
              if (done) break;
              buffer += decoder.decode(value, { stream: true });
              let end;
              while ((end = buffer.indexOf("\n\n")) >= 0) {  // whole frames only
                const frame = buffer.slice(0, end + 2);
                buffer = buffer.slice(end + 2);
                for (const line of frame.split("\n")) {
                  if (line.startsWith("id:")) lastId = line.slice(3).trim();
                  if (line.startsWith("data:")) {
                    const { type } = JSON.parse(line.slice(5));
                    finished ||= type === "RUN_FINISHED" || type === "RUN_ERROR";
                  }
                }
                controller.enqueue(encoder.encode(frame));
                failures = 0;
              }
            }
          } catch (error) {
            if (stopped || init.signal?.aborted) return controller.error(error);
          }
          if (finished || stopped) return controller.close();
          for (;;) {  // the stream broke off: the same request, from the last event
            if (lastId === null || ++failures > retries) {
              return controller.error(new Error("The run's stream broke off."));
            }
            await new Promise((resolve) => setTimeout(resolve, delayMs));
            const headers = new Headers(init.headers);
            headers.set("Last-Event-ID", lastId);
            try {
              response = await send(url, { ...init, headers });
            } catch (error) {
              if (init.signal?.aborted) return controller.error(error);
              continue;  // not reachable yet
            }
            if (response.ok && response.body) break;
            if (response.status < 500 && response.status !== 429) {
              const text = await response.text();
              return controller.error(new Error(`Resuming the run: ${response.status} ${text}`));
            }
          }
        }
      },
      cancel(reason) {
        stopped = true;
        return reader?.cancel(reason);
      },
    });
    return new Response(body, { status: first.status, headers: first.headers });
  };
}
