import Link from "next/link";
import type { ReactNode } from "react";
import "./globals.css";

export const metadata = {
  title: "Durable runs · durable-next",
  description: "Durable multi-step runs on Postgres, for Next.js on Vercel",
};

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body>
        <header className="topbar">
          <div className="topbar-inner">
            <Link href="/" className="brand">
              <span className="brand-mark" aria-hidden>
                ◆
              </span>{" "}
              durable-next
            </Link>
            <nav className="topnav">
              <Link href="/">Runs</Link>
              <Link href="/approvals">Approvals</Link>
              <Link href="/mock-providers">Mock providers</Link>
            </nav>
          </div>
        </header>
        <main className="container">{children}</main>
        <footer className="footer container">
          Steps, receipts and leases in Postgres; no worker process. Runs move when something calls the app: a start, a
          webhook, a status read, the cron.
        </footer>
      </body>
    </html>
  );
}
