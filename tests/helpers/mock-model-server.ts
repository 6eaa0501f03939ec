// The mock model (app/mock-providers/model.ts) on a node:http server at 127.0.0.1, for tests: the AI
// SDK's providers reach it over real HTTP, and a worker process can reach the one its test started.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createMockModel, type MockModel } from "@/app/mock-providers/model";

export interface MockModelServer {
  /** The base URL to give `createOpenAICompatible`: `http://127.0.0.1:<port>/v1`. */
  url: string;
  /** Requests received so far, by path (`/v1/chat/completions`, `/v1/audio/transcriptions`). */
  requests(): Record<string, number>;
  /** Forgets the counts and which prompts `cut-once` already cut. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts a mock model of its own on a free port of 127.0.0.1. By default it echoes the prompt
 * (`Echo: <prompt>`), so a test can tell which call answered what; pass `createMockModel()` for the
 * prose the app's own mock answers with.
 */
export async function startMockModelServer(
  model: MockModel = createMockModel({ echo: true }),
): Promise<MockModelServer> {
  const server = createServer((req, res) => {
    serve(model, req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests: () => model.requests(),
    reset: () => model.reset(),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** IncomingMessage to Request, the handler's Response to ServerResponse, the body streamed as it comes. */
async function serve(model: MockModel, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const gone = new AbortController();
  // The client closed the connection before the answer was complete: the handler stops waiting.
  res.on("close", () => {
    if (!res.writableFinished) gone.abort(new Error("the client went away"));
  });
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const hasBody = req.method !== "GET" && req.method !== "HEAD";
  const request = new Request(`http://${req.headers.host ?? "127.0.0.1"}${req.url ?? "/"}`, {
    method: req.method,
    headers,
    body: hasBody ? Buffer.concat(chunks) : undefined,
    signal: gone.signal,
  });
  const response = await model.handle(request);
  res.writeHead(response.status, Object.fromEntries(response.headers));
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  gone.signal.addEventListener("abort", () => void reader.cancel().catch(() => {}), { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    res.end();
  } catch {
    // The handler cut its body (or the client left): what was written still goes out, then the
    // connection closes without the end of the chunked body, as a dropped connection would.
    const socket = res.socket;
    if (socket && !socket.destroyed) socket.end();
    else res.destroy();
  }
}
