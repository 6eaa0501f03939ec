// The app's MCP server (docs/guide/mcp.md): hello and approval as tools, a call a run, the run a
// task. Its own module, imported only by app/api/durable/mcp/route.ts, so the other routes never
// load the MCP SDK.
import { createHash, timingSafeEqual } from "node:crypto";
import { createMcpRoute } from "@/lib/durable/mcp";
import { getDurable } from "./durable";
import { approval } from "./workflows/approval";
import { hello } from "./workflows/hello";

const digest = (value: string) => createHash("sha256").update(value).digest();

/**
 * Who may call the server: a request bearing DURABLE_SECRET, the admin secret, may call the tools
 * and operate every run. An app would read its own tokens here, and answer `"workflows"` for a
 * caller that may start runs and follow its tasks but not operate the others. With the secret
 * unset, nobody may.
 */
export function authorizeMcp(request: Request): boolean {
  const secret = process.env.DURABLE_SECRET;
  const match = /^Bearer ([\x21-\x7e]+)$/.exec(request.headers.get("authorization") ?? "");
  return Boolean(secret && match && timingSafeEqual(digest(match[1]!), digest(secret)));
}

export const mcpRoute = createMcpRoute(getDurable, {
  workflows: [hello, approval],
  authorize: authorizeMcp,
  maxDuration: 60,
});
