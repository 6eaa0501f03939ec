import type { Metadata } from "next";
import { cookies } from "next/headers";
import Link from "next/link";
import { redirect } from "next/navigation";
import { ChatPanel } from "@/app/components/chat-panel";
import { dashboardEnabled } from "@/app/dashboard-access";
import { getDurable } from "@/app/durable";
import { chatModelLabel } from "@/app/workflows/chat-model";
import { loadChat } from "@/lib/durable/ai";
import { pendingChatApprovals } from "./actions";
import { ownsChat, SESSION_COOKIE } from "./session";

export const dynamic = "force-dynamic";
// The approval action advances its run after answering: give it the same time as the routes.
export const maxDuration = 60;

export const metadata: Metadata = { title: "Support chat · durable-next" };

const EXAMPLES = ["lookupOrder 1042 and stock", "Please refund order 1042", "lookupOrder 1044"];

type Props = { searchParams: Promise<{ id?: string | string[] }> };

/**
 * The support chat demo: `?id=` names the chat (/chat/new makes one for this browser); the server
 * reads its history with `loadChat`, and the client goes on from there (app/components/chat-panel.tsx).
 */
export default async function ChatPage({ searchParams }: Props) {
  const { id } = await searchParams;
  if (typeof id !== "string" || id === "") redirect("/chat/new");
  const session = (await cookies()).get(SESSION_COOKIE)?.value;
  const owned = ownsChat(session, id);
  const initial = owned ? await loadChat(await getDurable(), id) : [];
  const pending = owned ? await pendingChatApprovals(id) : [];
  return (
    <>
      <nav className="crumbs">
        <Link href="/">← All runs</Link>
      </nav>
      <header className="hero">
        <h1>Support chat</h1>
        <p className="lede">
          Each answer is a durable run: the model's turns and the tool calls are steps with receipts, its words go to
          the run's stream. Reload mid-answer and it goes on where it was; Stop cancels the run and keeps what was
          written; a refund waits for your approval with nothing running.
        </p>
        <p className="small muted">
          Model: <code data-testid="chat-model">{chatModelLabel()}</code> · the shop's orders: 1042, 1043, 1044 ·{" "}
          <Link href="/chat/new">New chat</Link>
        </p>
      </header>
      {owned ? (
        <ChatPanel
          key={id}
          chatId={id}
          initial={initial}
          pending={pending}
          examples={EXAMPLES}
          runLinks={dashboardEnabled()}
        />
      ) : (
        <section className="panel notice" data-testid="chat-not-yours">
          <h2>No such chat here</h2>
          <p>
            A chat can be read only by the browser that started it. <Link href="/chat/new">Start a new chat</Link>.
          </p>
        </section>
      )}
    </>
  );
}
