import type { ReactNode } from "react";

export const metadata = { title: "Durable runs", description: "Durable multi-step runs on Postgres" };

export default function RootLayout({ children }: { children: ReactNode }) {
  return (
    <html lang="en">
      <body style={{ fontFamily: "system-ui, sans-serif", margin: "2rem auto", maxWidth: 960, padding: "0 1rem" }}>
        {children}
      </body>
    </html>
  );
}
