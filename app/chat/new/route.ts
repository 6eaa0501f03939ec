import { type NextRequest, NextResponse } from "next/server";
import { guardRoute } from "@/lib/durable/next";
import { isSession, newChatId, newSession, SESSION_COOKIE } from "../session";

export const dynamic = "force-dynamic";

/**
 * `GET /chat/new`: a new chat of this browser's session (made here when it has none: only a route
 * handler or an action may set a cookie), then the chat's page. Without DURABLE_SECRET in
 * production it cannot sign the id: 503 with the durable routes' error body, logged once.
 */
export const GET = guardRoute((request: NextRequest) => {
  const existing = request.cookies.get(SESSION_COOKIE)?.value;
  const session = isSession(existing) ? existing : newSession();
  // A relative Location: the browser stays on the host it asked (request.url may name another, such
  // as localhost for 127.0.0.1), which the cookie is set for.
  const response = new NextResponse(null, { status: 303, headers: { location: `/chat?id=${newChatId(session)}` } });
  if (session !== existing) {
    response.cookies.set(SESSION_COOKIE, session, {
      httpOnly: true,
      sameSite: "lax",
      path: "/",
      secure: request.nextUrl.protocol === "https:",
      maxAge: 60 * 60 * 24 * 30,
    });
  }
  return response;
});
